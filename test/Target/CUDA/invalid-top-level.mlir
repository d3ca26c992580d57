// RUN: gnn-translate --gnn-to-cuda --no-implicit-module %s --verify-diagnostics

// The printer takes a builtin.module of gnn.modules, not a gnn.module alone.
// expected-error @+1 {{expected a builtin.module}}
gnn.module @m {
}
