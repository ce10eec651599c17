package hostname

// Ready implements ready.Readiness: ready once the first snapshot of the
// store is in the index, while the node is within max_lag, and while it
// can sign every signed zone it holds.
func (h *Handler) Ready() bool {
	if n := h.node.Load(); n != nil {
		return (*n).Ready()
	}
	return false // not started
}
