"""The label audit: a judge model checks a stratified sample of annotated attributes, with canaries."""
