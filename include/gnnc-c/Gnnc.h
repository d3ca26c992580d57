/*===- Gnnc.h - The C interface of gnnc ---------------------------*- C -*-===*\
|*                                                                            *|
|* A small, stable C ABI over gnnc's compiler, tuner and runtime, for hosts *|
|* that cannot link C++ (the Python package loads it with ctypes, so it needs *|
|* no compilation against PyTorch).                                           *|
|*                                                                            *|
|* Memory: graphs' structure arrays and all tensors live in device memory    *|
|* owned by the caller (e.g. torch tensors); gnnc reads and writes them in    *|
|* place, on the caller's CUDA stream, and never frees them. The caller keeps *|
|* them alive while a graph or a launch uses them. gnnc allocates only what  *|
|* it derives itself (neighbour groups, column factors, workspace).           *|
|*                                                                            *|
|* Errors: every function returns GNNC_OK or GNNC_ERROR; after an error,     *|
|* gnnc_last_error() gives the message on the calling thread (valid until    *|
|* that thread's next call). No function aborts or throws on bad input.      *|
|*                                                                            *|
|* Threads: a context may be used from several threads, one call at a time   *|
|* (calls on one context are serialized by a lock inside it).                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef GNNC_C_GNNC_H
#define GNNC_C_GNNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct or signature below changes. Functions are only
 * added within a version (snapshot groups came later in version 1): a host
 * that needs a newer function looks its symbol up. */
#define GNNC_ABI_VERSION 2

typedef enum gnnc_status { GNNC_OK = 0, GNNC_ERROR = 1 } gnnc_status;

typedef enum gnnc_dtype {
  GNNC_F32 = 0,
  GNNC_F16 = 1,
  GNNC_BF16 = 2
} gnnc_dtype;

typedef enum gnnc_op_kind {
  GNNC_OP_SPMM = 0,
  GNNC_OP_SDDMM = 1,
  GNNC_OP_EDGE_SOFTMAX = 2,
  GNNC_OP_EDGE_SOFTMAX_GRAD = 3
} gnnc_op_kind;

typedef enum gnnc_reduce {
  GNNC_REDUCE_SUM = 0,
  GNNC_REDUCE_MEAN = 1,
  GNNC_REDUCE_MAX = 2
} gnnc_reduce;

typedef enum gnnc_scale {
  GNNC_SCALE_NONE = 0,
  GNNC_SCALE_LEFT = 1,
  GNNC_SCALE_RIGHT = 2,
  GNNC_SCALE_BOTH = 3
} gnnc_scale;

typedef enum gnnc_sddmm_form {
  GNNC_SDDMM_DOT = 0,
  GNNC_SDDMM_ADD = 1
} gnnc_sddmm_form;

/* One op, as gnnc::OpDesc (gnnc/Plan/Types.h) describes it. Fill it with
 * gnnc_op_desc_init first, then set the fields that matter. */
typedef struct gnnc_op_desc {
  /* sizeof(gnnc_op_desc), set by gnnc_op_desc_init. */
  uint32_t struct_size;
  gnnc_op_kind kind;
  gnnc_dtype dtype;
  /* Features per row (spmm, sddmm); heads (edge softmax and its gradient). */
  int64_t width;
  /* Elements from one feature row to the next (spmm only); 0: the width. */
  int64_t row_stride;
  /* spmm: reads one value per edge (in the graph's edge order). */
  int32_t edge_values;
  gnnc_reduce reduce;
  gnnc_scale scale;
  /* spmm: GIN's self term (1 + self_weight) * x[r], when has_self_weight. */
  int32_t has_self_weight;
  double self_weight;
  /* spmm: column factors deg_in(c)^-col_norm_exponent, when
   * has_col_norm_exponent (else 1/2). */
  int32_t has_col_norm_exponent;
  double col_norm_exponent;
  /* sddmm (has_leaky_relu and leaky_relu also spmm's attention logits) */
  gnnc_sddmm_form form;
  int32_t has_leaky_relu;
  double leaky_relu;
  /* spmm: GAT's aggregation in one kernel: each edge (r, c) weighs x[c] by
   * the softmax over row r of leaky_relu(att_dst[r] + att_src[c]) (the
   * slope of has_leaky_relu/leaky_relu; without it the plain sum), the
   * scores given at launch (gnnc_spmm_attention). Sum only: no edge values,
   * scaling or self term. */
  int32_t attention;
} gnnc_op_desc;

/* A device array: its address and its size in bytes (checked against what
 * the op reads or writes). An absent optional array is {0, 0}. */
typedef struct gnnc_buffer {
  uint64_t address;
  uint64_t bytes;
} gnnc_buffer;

typedef struct gnnc_context_s *gnnc_context;
typedef struct gnnc_graph_s *gnnc_graph;
typedef struct gnnc_kernel_s *gnnc_kernel;
typedef struct gnnc_snapshot_group_s *gnnc_snapshot_group;

/* The ABI version this library was built with (GNNC_ABI_VERSION). */
int gnnc_abi_version(void);

/* The message of the calling thread's last error ("" if none). */
const char *gnnc_last_error(void);

/* Sets every field to its default: spmm, f32, width 0, sum, no scaling,
 * no edge values, dot form, nothing optional set. */
void gnnc_op_desc_init(gnnc_op_desc *desc);

/* Whether a CUDA device can be used (1) or not (0); `why` (may be NULL)
 * receives the reason, truncated to `why_size` bytes. */
int gnnc_gpu_available(char *why, size_t why_size);

/*--- Host-side graph building (no GPU needed) --------------------------*/

/* Builds the CSR of the edge list (src[i] -> dst[i]), i < nnz, over
 * `num_nodes` nodes with rows = destinations, so that row r aggregates its
 * in-neighbours (PyG's source_to_target flow): row_ptr (num_nodes + 1
 * int64), col_idx (nnz int32: the sources, ascending within a row, ties in
 * input order) and perm (nnz int64: the input position of each CSR edge),
 * all allocated by the caller. Duplicate edges are kept. Fails, naming the
 * position, on a node index outside [0, num_nodes), and on num_nodes or nnz
 * beyond int32 column indices. Swap src and dst for the transposed graph. */
gnnc_status gnnc_coo_to_csr(int64_t num_nodes, int64_t nnz, const int64_t *src,
                            const int64_t *dst, int64_t *row_ptr,
                            int32_t *col_idx, int64_t *perm);

/* Checks a host CSR as gnnc_graph_create does (offsets from 0 to nnz, non
 * decreasing; columns in [0, num_cols)); `name` (may be NULL) names it in
 * the message. */
gnnc_status gnnc_csr_validate(const char *name, int64_t num_rows,
                              int64_t num_cols, int64_t nnz,
                              const int64_t *row_ptr, const int32_t *col_idx);

/* Checks, without a GPU, that gnnc can compile `desc` (and `schedule`, a
 * `#gnn.schedule<...>` or NULL for the default): the op verifier, the
 * schedule's legality and the kernel plan, then the CUDA printer. The error
 * says which rule was broken. */
gnnc_status gnnc_op_check(const gnnc_op_desc *desc, const char *schedule);

/*--- Contexts -----------------------------------------------------------*/

/* Opens CUDA device `device` (its primary context, the one PyTorch uses).
 * `cache_dir`: the kernel cache directory (NULL or "": the default,
 * GNNC_CACHE_DIR or ~/.cache/gnnc; "off": none). `tuning_db`: the tuning
 * database consulted when choosing schedules (NULL or "": the default;
 * "off": the cost model alone). */
gnnc_status gnnc_context_create(int device, const char *cache_dir,
                                const char *tuning_db, gnnc_context *out);
void gnnc_context_destroy(gnnc_context ctx);
/* How kernels requested without a schedule are chosen for a graph: with
 * `measure_top_k` > 0, the cost model's leaders (its best, every other
 * strategy's best, the next ranked up to `measure_top_k`) are timed on
 * this GPU over the graph with random features and the fastest is taken;
 * 0 (the default): the cost model's best. A tuning database entry for the
 * graph is taken as it is either way. Applies to kernels requested after
 * the call. */
gnnc_status gnnc_context_set_measure(gnnc_context ctx, int measure_top_k);
/* The device's name and NVRTC architecture ("sm_90"), into caller buffers. */
gnnc_status gnnc_context_device(gnnc_context ctx, char *name, size_t name_size,
                                char *arch, size_t arch_size);

/*--- Graphs -------------------------------------------------------------*/

/* A CSR graph of `num_rows` x `num_cols` with `nnz` edges. `host_row_ptr`
 * (num_rows + 1 int64) and `host_col_idx` (nnz int32) are copied and
 * validated (non-decreasing offsets from 0 to nnz, columns in range): the
 * tuner and the derived arrays read them. `dev_row_ptr` (int64) and
 * `dev_col_idx` (int32) hold the same arrays in device memory, owned by the
 * caller, who keeps them alive while the graph lives. `name` (may be NULL)
 * names the graph in messages. */
gnnc_status gnnc_graph_create(gnnc_context ctx, const char *name,
                              int64_t num_rows, int64_t num_cols, int64_t nnz,
                              const int64_t *host_row_ptr,
                              const int32_t *host_col_idx,
                              gnnc_buffer dev_row_ptr, gnnc_buffer dev_col_idx,
                              gnnc_graph *out);
void gnnc_graph_destroy(gnnc_graph graph);

/*--- Kernels ------------------------------------------------------------*/

/* The kernel computing `desc` on `graph` (whose index widths it takes:
 * int64 offsets, int32 indices). `schedule` is a `#gnn.schedule<...>`
 * attribute, or NULL to let gnnc choose for this graph (the tuning
 * database's entry, else the cost model's best). Compiled with NVRTC
 * through the cache on first request and kept by the graph: a second
 * request with the same description and schedule returns the same kernel.
 * The kernel belongs to the graph (do not use it after gnnc_graph_destroy). */
gnnc_status gnnc_kernel_get(gnnc_graph graph, const gnnc_op_desc *desc,
                            const char *schedule, gnnc_kernel *out);
/* The schedule the kernel runs, as `#gnn.schedule<...>`, and where it came
 * from ("written", "database", "cost model"), into caller buffers. */
gnnc_status gnnc_kernel_schedule(gnnc_kernel kernel, char *schedule,
                                 size_t schedule_size, char *source,
                                 size_t source_size);

/*--- Gradients ----------------------------------------------------------*/

/* The op whose kernel, run over the transposed graph with the forward's
 * edge values permuted to the transpose's edge order, gives the feature
 * gradient of the forward spmm `fwd` (gnnc::ops::spmmFeatureGradForm).
 * Fails for reduce = max (whose gradient needs the forward's argmax). */
gnnc_status gnnc_spmm_feature_grad_op(const gnnc_op_desc *fwd,
                                      gnnc_op_desc *grad);

/* The row and column factors of spmm `desc` on `graph` (gnnc::ref::
 * spmmFactors): y[r] = row[r] * sum over edges (r, c) of col[c] * value *
 * x[c]. The edge-value gradient of the spmm is the dot-form sddmm of dy
 * and x with each edge's result multiplied by row[r] * col[c]. `row`
 * (num_rows floats) and `col` (num_cols floats) are host arrays. */
gnnc_status gnnc_graph_spmm_factors(gnnc_graph graph, const gnnc_op_desc *desc,
                                    float *row, float *col);

/*--- Launches (asynchronous on `stream`, a CUstream; 0: the default) ----*/

/* spmm: y = reduce over each row's edges of (value *) x[col], with the op's
 * scaling and self term. x: num_cols rows (num_rows with a self term), y:
 * num_rows rows, each of row_stride elements of dtype; values: nnz elements
 * of dtype when the op reads edge values, else {0, 0}. */
gnnc_status gnnc_spmm(gnnc_kernel kernel, gnnc_buffer x, gnnc_buffer values,
                      gnnc_buffer y, uint64_t stream);
/* spmm with attention (gnnc_op_desc.attention): y = for each row r, the
 * sum over its edges (r, c) of softmax_r(leaky_relu(att_dst[r] +
 * att_src[c])) * x[col]. x: num_cols rows, y: num_rows rows of row_stride
 * elements; att_dst: num_rows and att_src: num_cols elements, all of
 * dtype. */
gnnc_status gnnc_spmm_attention(gnnc_kernel kernel, gnnc_buffer x,
                                gnnc_buffer att_dst, gnnc_buffer att_src,
                                gnnc_buffer y, uint64_t stream);
/* sddmm: out[e] from a[row(e)] and b[col(e)]: a has num_rows rows and b
 * num_cols rows of width elements; out has nnz x (1 for dot, width for
 * add) elements. */
gnnc_status gnnc_sddmm(gnnc_kernel kernel, gnnc_buffer a, gnnc_buffer b,
                       gnnc_buffer out, uint64_t stream);
/* Edge softmax over each row's edges, per head: logits and out hold
 * nnz x heads elements. */
gnnc_status gnnc_edge_softmax(gnnc_kernel kernel, gnnc_buffer logits,
                              gnnc_buffer out, uint64_t stream);
/* Its gradient: dx from the softmax output `out` and the gradient of a loss
 * with respect to it, each nnz x heads elements. */
gnnc_status gnnc_edge_softmax_grad(gnnc_kernel kernel, gnnc_buffer out,
                                   gnnc_buffer grad_out, gnnc_buffer dx,
                                   uint64_t stream);

/*--- Snapshot groups (several snapshots aggregated at once) -------------*/

/* A group of `num_snapshots` (1 to 64) snapshots of a dynamic graph over
 * `num_nodes` nodes. Snapshot s is a host CSR with rows = destinations:
 * host_row_ptrs[s] (num_nodes + 1 int64) and host_col_idxs[s] (nnzs[s]
 * int32: the sources, strictly increasing within a row, so sorted with no
 * repeated edge). Each snapshot is checked as gnnc_csr_validate does, and
 * its rows for order; the error names the group, the snapshot and the rule
 * ("covid: snapshot 3: row 7 is not sorted and unique: ..."). gnnc splits
 * the group into the edges every snapshot has (the overlap, read once for
 * all of them) and each snapshot's exclusive edges, and uploads its own
 * device copies: unlike gnnc_graph_create, nothing is borrowed, and the
 * host arrays may be freed after the call. The transposed group (the
 * feature gradient's) is built on its first request. `ctx` may be NULL for
 * a host-only group, whose edge counts can be read without a GPU but which
 * has no kernels. `name` (may be NULL) names the group in messages. */
gnnc_status gnnc_snapshot_group_create(gnnc_context ctx, const char *name,
                                       int64_t num_nodes, int64_t num_snapshots,
                                       const int64_t *const *host_row_ptrs,
                                       const int32_t *const *host_col_idxs,
                                       const int64_t *nnzs,
                                       gnnc_snapshot_group *out);
void gnnc_snapshot_group_destroy(gnnc_snapshot_group group);

/* The group's edge counts, into caller variables (each may be NULL):
 * `overlap_edges`, the edges every snapshot has; `stored_edges`, those
 * stored (the overlap once plus every snapshot's exclusive edges);
 * `snapshot_edges`, the snapshots' edges summed; and `overlap_rate` =
 * overlap_edges x num_snapshots / snapshot_edges, the fraction of the
 * snapshots' edges that are shared (0 when they have none). */
gnnc_status gnnc_snapshot_group_edges(gnnc_snapshot_group group,
                                      int64_t *overlap_edges,
                                      int64_t *stored_edges,
                                      int64_t *snapshot_edges,
                                      double *overlap_rate);

/* Checks, without a GPU, that gnnc can compile the spmm `desc` over a
 * group of `num_snapshots` snapshots (as gnnc_snapshot_kernel_get takes
 * them): desc->width is the features of one snapshot; reduce sum or mean,
 * any scaling and column exponent; no edge values, self term or row
 * stride. `schedule`: a `#gnn.schedule<strategy = sliced, ...>`, or NULL
 * for the default sliced schedule. The error says which rule was broken. */
gnnc_status gnnc_snapshot_op_check(const gnnc_op_desc *desc,
                                   int64_t num_snapshots, const char *schedule);

/* The kernel computing spmm `desc` over every snapshot of `group` in one
 * launch: snapshot s's result is the spmm over snapshot s's edges of
 * snapshot s's features, with snapshot s's degrees for reduce = mean and
 * for the scalings (right and both: snapshot s's column factors, which
 * gnnc derives). desc->width is F, the features of one snapshot; the rules
 * and `schedule` are gnnc_snapshot_op_check's. With `transposed` = 1 the
 * kernel runs over the transposed group (every snapshot transposed), 0
 * over the group as given. Compiled with NVRTC through the cache on first
 * request and kept by the group: the same request returns the same kernel,
 * which belongs to the group (do not use it after
 * gnnc_snapshot_group_destroy). Launch it with gnnc_snapshot_spmm.
 *
 * Gradient: the feature gradient of a kernel of `desc` with `transposed` =
 * t is the kernel of gnnc_spmm_feature_grad_op(desc) with `transposed` =
 * 1 - t, run on the gradient of the result, for every reduce and scaling
 * it takes (snapshots may be directed). */
gnnc_status gnnc_snapshot_kernel_get(gnnc_snapshot_group group,
                                     const gnnc_op_desc *desc,
                                     const char *schedule, int transposed,
                                     gnnc_kernel *out);

/* Multi-snapshot spmm (asynchronous on `stream`): x and y hold num_nodes
 * rows of num_snapshots x F elements of the kernel's dtype, a node's
 * snapshots side by side (a contiguous nodes x snapshots x F tensor); x is
 * read and y written, so they may not overlap. */
gnnc_status gnnc_snapshot_spmm(gnnc_kernel kernel, gnnc_buffer x, gnnc_buffer y,
                               uint64_t stream);

/*--- Snapshots per group -------------------------------------------------*/

/* What gnnc_snapshot_group_choose measured and derived for one group size:
 * the size; the overlap rate of the series' first group of that size; the
 * bytes of its features, of its structure (sent: the overlap once and the
 * exclusive parts) and of one group on the GPU (structure, work items,
 * features and results); the groups of that size in the series and how
 * many keep their structure on the GPU; a group's copies (averaged over an
 * epoch, at the measured bandwidth) and aggregation (measured, ms); the
 * cost per snapshot; and whether two groups fit the memory budget. */
typedef struct gnnc_snapshot_group_size {
  int64_t snapshots;
  double overlap_rate;
  int64_t feature_bytes;
  int64_t structure_bytes;
  int64_t device_bytes;
  int64_t groups;
  int64_t cached_groups;
  double copy_ms;
  double aggregate_ms;
  double ms_per_snapshot;
  int32_t fits;
  int32_t reserved;
} gnnc_snapshot_group_size;

#define GNNC_SNAPSHOT_GROUP_SIZES 8

/* The choice: `snapshots` per group (0 when no size fits the budget:
 * aggregate each snapshot alone), its groups in the series, how many of
 * them keep their structure on the GPU, the budget and the measured
 * host-to-device bandwidth, and the `num_sizes` sizes tried. */
typedef struct gnnc_snapshot_group_choice {
  int64_t snapshots;
  int64_t groups;
  int64_t cached_groups;
  int64_t memory_budget;
  double host_to_device_gbps;
  int32_t num_sizes;
  int32_t reserved;
  gnnc_snapshot_group_size sizes[GNNC_SNAPSHOT_GROUP_SIZES];
} gnnc_snapshot_group_choice;

/* How many snapshots of a series one multi-snapshot aggregation should
 * take (PiPAD's runtime tuner, gnnc::tuning::chooseSnapshotGroup): for
 * groups of 2, 4 and 8 (those the series holds), the series' first group
 * of that size is aggregated on ctx's GPU (sum over `width` features of
 * `dtype` per snapshot, the default sliced kernel) and its copies priced
 * at the host-to-device bandwidth measured there; the size with the least
 * cost per snapshot among those whose groups fit `memory_budget` bytes
 * two at a time (0: half the GPU's memory) wins, costs within 5% going to
 * the lesser aggregation. With `pipelined` = 1 a group costs the larger of
 * its copies and its aggregation (the next group's copies overlap this
 * one's aggregation), with 0 their sum. The series is `num_snapshots`
 * (at least 1) snapshots as gnnc_snapshot_group_create takes them,
 * checked the same way (every snapshot, errors naming it), all before the
 * GPU is used; `ctx` must not be NULL. Writes *out. */
gnnc_status gnnc_snapshot_group_choose(gnnc_context ctx, const char *name,
                                       int64_t num_nodes, int64_t num_snapshots,
                                       const int64_t *const *host_row_ptrs,
                                       const int32_t *const *host_col_idxs,
                                       const int64_t *nnzs, int64_t width,
                                       gnnc_dtype dtype, int64_t memory_budget,
                                       int pipelined,
                                       gnnc_snapshot_group_choice *out);

/*--- Segmented matmul (rows grouped by type: RGCN, HGT) -----------------*/

/* Y_t = X_t W_t for the rows of each type t (gnn.segment_matmul): X holds
 * num_rows rows of K elements grouped by type, the rows of type t being
 * [offsets[t], offsets[t + 1]); W holds num_types matrices of K x M
 * (row-major, one after the other); Y num_rows rows of M. Added within
 * ABI version 1. */

/* Which of the three segmented matmuls a kernel computes. */
typedef enum gnnc_segment_pass {
  /* y = x W_t: x rows of K, y rows of M. */
  GNNC_SEGMENT_FORWARD = 0,
  /* The input gradient dx = dy W_t^T (W in its forward K x M layout, read
   * transposed): dy rows of M, dx rows of K. */
  GNNC_SEGMENT_INPUT_GRAD = 1,
  /* The weight gradient dW_t = x_t^T dy_t (num_types x K x M; zeros for a
   * type without rows). */
  GNNC_SEGMENT_WEIGHT_GRAD = 2
} gnnc_segment_pass;

/* One segmented matmul. Fill it with gnnc_segment_desc_init first. */
typedef struct gnnc_segment_desc {
  /* sizeof(gnnc_segment_desc), set by gnnc_segment_desc_init. */
  uint32_t struct_size;
  gnnc_dtype dtype;
  /* Columns of the forward's input (K) and of its result (M), whatever the
   * pass. */
  int64_t k;
  int64_t m;
  gnnc_segment_pass pass;
  /* f32 only: 1 lets gnnc run f32 on tensor cores with TF32 inputs (10
   * bits of mantissa, f32 accumulation) where they fit; 0 keeps exact f32
   * arithmetic. f16 and bf16 use tensor cores where they fit either way
   * (f32 accumulation). */
  int32_t allow_tf32;
} gnnc_segment_desc;

typedef struct gnnc_segments_s *gnnc_segments;
typedef struct gnnc_segment_kernel_s *gnnc_segment_kernel;

/* Sets every field to its default: f32, K = M = 0, forward, exact f32. */
void gnnc_segment_desc_init(gnnc_segment_desc *desc);

/* Checks, without a GPU, that gnnc can compile `desc` with `schedule` (a
 * `#gnn.schedule<strategy = tile_routed, ...>`, or NULL for the schedule
 * gnnc chooses, as gnnc_segment_kernel_get does): the op verifier, the
 * plan, the CUDA printer, and with `arch` (e.g. "sm_90"; NULL: skipped)
 * NVRTC for that architecture. `chosen` (may be NULL) receives the
 * complete schedule the kernel would run, truncated to `chosen_size`
 * bytes. The error says which rule was broken. */
gnnc_status gnnc_segment_op_check(const gnnc_segment_desc *desc,
                                  const char *schedule, const char *arch,
                                  char *chosen, size_t chosen_size);

/* A segment layout: `num_types` + 1 host offsets (int64) over `num_rows`
 * rows, checked (the first 0, none decreasing, the last num_rows; the
 * error names the first offset that breaks a rule) and copied: gnnc keeps
 * its own device copy and the routing tables of its kernels (built on
 * first use, one per tile size), so the host array may be freed after the
 * call. `ctx` may be NULL for a host-only layout (checks without a GPU; no
 * kernels). `name` (may be NULL) names it in messages. */
gnnc_status gnnc_segments_create(gnnc_context ctx, const char *name,
                                 int64_t num_rows, int64_t num_types,
                                 const int64_t *host_offsets,
                                 gnnc_segments *out);
void gnnc_segments_destroy(gnnc_segments segments);

/* The layout's rows and types, into caller variables (each may be NULL). */
gnnc_status gnnc_segments_shape(gnnc_segments segments, int64_t *num_rows,
                                int64_t *num_types);

/* The kernel computing `desc` over `segments`. `schedule`: a
 * `#gnn.schedule<...>`, or NULL to let gnnc choose (today the plan's
 * rules: tensor cores for f16 and bf16, and for f32 with allow_tf32, where
 * they fit; SIMT otherwise). Compiled with NVRTC through the cache on
 * first request and kept by the layout: the same request returns the same
 * kernel, which belongs to the layout (do not use it after
 * gnnc_segments_destroy). */
gnnc_status gnnc_segment_kernel_get(gnnc_segments segments,
                                    const gnnc_segment_desc *desc,
                                    const char *schedule,
                                    gnnc_segment_kernel *out);
/* The schedule the kernel runs, as `#gnn.schedule<...>`, and where it came
 * from ("written", "default"), into caller buffers. */
gnnc_status gnnc_segment_kernel_schedule(gnnc_segment_kernel kernel,
                                         char *schedule, size_t schedule_size,
                                         char *source, size_t source_size);

/* Forward (x rows of K, y rows of M) or input gradient (x = dy rows of M,
 * y = dx rows of K) of a kernel of pass GNNC_SEGMENT_FORWARD or
 * GNNC_SEGMENT_INPUT_GRAD, asynchronous on `stream`: w holds num_types x K
 * x M elements; every buffer is of the kernel's dtype, rows contiguous. y
 * may not overlap x or w. On tensor cores every buffer starts on 16 bytes
 * (the kernel copies and stores 16 bytes at a time; a buffer that does
 * not is refused with GNNC_ERROR), on SIMT on an element. */
gnnc_status gnnc_segment_matmul(gnnc_segment_kernel kernel, gnnc_buffer x,
                                gnnc_buffer w, gnnc_buffer y, uint64_t stream);
/* Weight gradient of a kernel of pass GNNC_SEGMENT_WEIGHT_GRAD: x (rows of
 * K) and dy (rows of M) to dw (num_types x K x M), asynchronous on
 * `stream`; dw may not overlap x or dy; the buffers' alignment as for
 * gnnc_segment_matmul. The per-split partials live in the context's
 * workspace of the stream. */
gnnc_status gnnc_segment_matmul_weight_grad(gnnc_segment_kernel kernel,
                                            gnnc_buffer x, gnnc_buffer dy,
                                            gnnc_buffer dw, uint64_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_C_GNNC_H */
