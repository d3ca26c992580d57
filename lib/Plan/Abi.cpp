//===- Abi.cpp - The roles of a kernel's parameters -----------------------===//
#include "gnnc/Plan/Abi.h"

#include "EnumNames.h"

using namespace gnnc;
using namespace gnnc::plan;

namespace {
const char *const kKindNames[] = {"ptr", "i32", "i64", "f32"};
const char *const kRoleNames[] = {"row_offsets",
                                  "column_indices",
                                  "num_rows",
                                  "input",
                                  "edge_values",
                                  "result",
                                  "column_factors",
                                  "num_edges",
                                  "workspace",
                                  "group_offsets",
                                  "group_rows",
                                  "num_groups",
                                  "graph_offsets",
                                  "num_graphs",
                                  "batch_blocks",
                                  "num_batch_blocks",
                                  "unused",
                                  "num_items",
                                  "segment_weights",
                                  "segment_offsets",
                                  "num_segments",
                                  "route_tiles",
                                  "num_route_tiles",
                                  "route_blocks",
                                  "exclusive_offsets",
                                  "exclusive_indices",
                                  "slice_offsets",
                                  "slice_rows",
                                  "num_slices",
                                  "num_split_rows",
                                  "linear_weights",
                                  "linear_bias",
                                  "attention_rows",
                                  "attention_columns",
                                  "group_begins"};
} // namespace

const char *gnnc::paramKindName(ParamKind kind) {
  return nameOf(kKindNames, kind);
}

std::optional<ParamKind> gnnc::parseParamKind(const std::string &text) {
  return lookupName<ParamKind>(kKindNames, text);
}

const char *gnnc::paramRoleName(ParamRole role) {
  return nameOf(kRoleNames, role);
}

std::optional<ParamRole> gnnc::parseParamRole(const std::string &text) {
  return lookupName<ParamRole>(kRoleNames, text);
}

ParamKind gnnc::paramKindOf(ParamRole role) {
  switch (role) {
  case ParamRole::NumRows:
  case ParamRole::NumEdges:
  case ParamRole::NumGroups:
  case ParamRole::NumGraphs:
  case ParamRole::NumBatchBlocks:
  case ParamRole::NumItems:
  case ParamRole::NumSegments:
  case ParamRole::NumRouteTiles:
  case ParamRole::RouteBlocks:
  case ParamRole::NumSlices:
  case ParamRole::NumSplitRows:
    return ParamKind::Int64;
  default:
    return ParamKind::Pointer;
  }
}

const char *gnnc::extraParamStem(ParamRole role) {
  switch (role) {
  case ParamRole::ColumnFactors:
    return "col_norm";
  case ParamRole::NumEdges:
    return "num_edges";
  case ParamRole::Workspace:
    return "workspace";
  case ParamRole::GroupOffsets:
    return "group_ptr";
  case ParamRole::GroupRows:
    return "group_rows";
  case ParamRole::GroupBegins:
    return "group_begins";
  case ParamRole::NumGroups:
    return "num_groups";
  case ParamRole::GraphOffsets:
    return "graph_ptr";
  case ParamRole::NumGraphs:
    return "num_graphs";
  case ParamRole::BatchBlocks:
    return "batch_blocks";
  case ParamRole::NumBatchBlocks:
    return "num_batch_blocks";
  case ParamRole::NumSegments:
    return "num_types";
  case ParamRole::RouteTiles:
    return "route_tiles";
  case ParamRole::NumRouteTiles:
    return "num_route_tiles";
  case ParamRole::RouteBlocks:
    return "route_blocks";
  case ParamRole::ExclusiveOffsets:
    return "excl_ptr";
  case ParamRole::ExclusiveIndices:
    return "excl_idx";
  case ParamRole::SliceOffsets:
    return "slice_ptr";
  case ParamRole::SliceRows:
    return "slice_rows";
  default:
    return paramRoleName(role);
  }
}
