#!/usr/bin/env bash
# Install Debian's pdflatex with booktabs for the paper-table compile test, only when it is missing (idempotent).
set -euo pipefail
if command -v pdflatex >/dev/null && kpsewhich booktabs.sty >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends texlive-latex-base texlive-latex-recommended >/dev/null
