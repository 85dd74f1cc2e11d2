"""The "In real models" page: what a trained encoder's heads do with √d_k."""
