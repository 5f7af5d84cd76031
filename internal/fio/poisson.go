package fio

import "math"

// poissonRateIOPS is the rate_iops to give fio for Poisson arrivals at
// want I/Os a second per job. fio does not offer rate_iops itself there:
// it draws each gap as (1,000,000 / rate_iops) × −ln(u), the division in
// whole microseconds and the gap cut to whole microseconds (usec_for_io
// in fio's backend.c). With m = ⌊1,000,000 / rate_iops⌋ the mean gap is
// then Σ_{k≥1} e^{−k/m} = 1 / (e^{1/m} − 1) µs, less than m, and fio offers
// 1,000,000 × (e^{1/m} − 1) a second: 40,811 for rate_iops=39185 (m = 25),
// 4.1% over; fio 3.33 here measured 40,625 and 40,721. The rate_iops
// returned is the one whose offered rate is nearest to want; m being
// whole, that is within half a step of the grid, whose steps are about
// 1/m of the rate: ±0.5% at 10,000 a second, ±2% at 40,000, ±5% at 100,000.
// From 1,000,000 up (m = 0) fio would not pace at all; the top of the grid,
// m = 1, offers 1,718,282.
func poissonRateIOPS(want int) int {
	if want <= 0 {
		return want
	}
	// The least rate_iops whose offer reaches want (offer only grows with
	// rate_iops), then whichever of it and the one before is nearer.
	lo, hi := 1, 1_000_000
	for lo < hi {
		mid := (lo + hi) / 2
		if poissonOffered(mid) >= float64(want) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > 1 && float64(want)-poissonOffered(lo-1) < poissonOffered(lo)-float64(want) {
		return lo - 1
	}
	return lo
}

// poissonOffered is the rate fio offers with rate_iops r and Poisson
// arrivals (poissonRateIOPS).
func poissonOffered(r int) float64 {
	m := 1_000_000 / r
	if m == 0 {
		return math.Inf(1)
	}
	return 1e6 * math.Expm1(1/float64(m))
}
