"""Chrome Trace Event Format JSON: the event array cut where one event ends (scan), batches
decoded (decode) and read in bounded memory (read), events pushed into the builder (events),
one file read into a builder of its own (file_read)."""
