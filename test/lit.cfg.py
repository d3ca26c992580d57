# lit configuration for gnnc.
import os
import lit.formats

config.name = "gnnc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".gnn", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gnnc_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "Runtime", "Graph", "Compiler"]
config.excludes.append("Inputs")

path = os.pathsep.join([config.gnnc_tools_dir, config.llvm_tools_dir,
                        config.environment.get("PATH", "")])
config.environment["PATH"] = path
# Keep compiled kernels out of the user's cache.
config.environment["GNNC_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                    "kernel-cache")
config.substitutions.append(("%gnnc_src", config.gnnc_src_root))
import sys
config.substitutions.append(("%python", sys.executable))
# %exit-status N CMD...: CMD must exit with status N (not a signal).
config.substitutions.append(
    ("%exit-status", sys.executable + " " + os.path.join(
        config.gnnc_src_root, "test", "tools", "Inputs", "exit-status.py")))
