package hostname

// Ready implements ready.Readiness: ready once the first snapshot of the
// store is in the index.
func (h *Handler) Ready() bool { return h.index.Loaded() }
