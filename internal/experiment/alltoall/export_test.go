package alltoall

// SetNeighbourLimit has the exchange see limit as the kernel's neighbour
// table limit until the returned function restores it.
func SetNeighbourLimit(limit int) (restore func()) {
	old := neighbourLimit
	neighbourLimit = func() int { return limit }
	return func() { neighbourLimit = old }
}
