package server

// SetPortPicker makes starts pick their free ports with f until restore is
// called. Tests that set it must not run in parallel with other starts.
func SetPortPicker(f func(avoid int) (int, error)) (restore func()) {
	old := pickPort
	pickPort = f
	return func() { pickPort = old }
}
