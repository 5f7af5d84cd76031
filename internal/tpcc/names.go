package tpcc

// syllables are the ten syllables of C_LAST (4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// AppendLastName appends the C_LAST of number n in 0..999: one syllable per
// decimal digit (4.3.2.3), so 371 is PRICALLYOUGHT and 40 is BARPRESBAR.
func AppendLastName(b []byte, n int) []byte {
	b = append(b, syllables[n/100]...)
	b = append(b, syllables[n/10%10]...)
	return append(b, syllables[n%10]...)
}

// LastName returns the C_LAST of number n in 0..999. The thousand names
// are made once: the driver draws one for 60% of Payments and
// Order-Statuses, and a string made per draw was an allocation each.
func LastName(n int) string { return lastNames[n] }

var lastNames = func() (names [1000]string) {
	for n := range names {
		names[n] = string(AppendLastName(nil, n))
	}
	return names
}()
