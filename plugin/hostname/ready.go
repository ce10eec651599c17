package hostname

// Ready implements ready.Readiness: ready once the first snapshot of the
// store is in the index, and while the node is within max_lag.
func (h *Handler) Ready() bool {
	if n := h.node.Load(); n != nil {
		return (*n).Ready()
	}
	return h.index.Loaded()
}
