"""`paperatlas eval ...`: quality measured on real data, every method side by side in one run."""
