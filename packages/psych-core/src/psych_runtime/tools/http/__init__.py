"""HTTP tools: a Spec's ``HttpTool`` turned into a request (``request``) and sent (``executor``)."""
