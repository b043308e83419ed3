"""The release wing's commands, registered with the `lookbench` app through the `lookbench.commands` entry points."""
