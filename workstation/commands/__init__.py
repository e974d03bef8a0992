"""Every `workstation X` command: its argparse setup and a call into the layers below (cli.py only
parses and maps errors to exit codes)."""
