package tpcc

import (
	"fmt"
	"strconv"
	"strings"
)

// Mix is the share of each transaction type, in cards out of a deck.
type Mix [NumKinds]int

// DefaultMix is the spec's deck of 23 cards: 10 New-Order, 10 Payment and one
// each of Order-Status, Delivery and Stock-Level, reshuffled every pass
// (5.2.4.2).
var DefaultMix = Mix{10, 10, 1, 1, 1}

// minimumMix are the minimum percentages of 5.2.3: Payment 43%, the others
// 4% each (New-Order has no minimum: it is what is measured).
var minimumMix = [NumKinds]float64{0, 43, 4, 4, 4}

var mixKeys = map[string]Kind{"no": NewOrder, "p": Payment, "os": OrderStatus, "d": Delivery, "sl": StockLevel}

// ParseMix reads a mix such as "no=45,p=43,os=4,d=4,sl=4" (percentages that
// add up to 100). Unless unchecked, it must meet the spec's minimums.
func ParseMix(s string, unchecked bool) (Mix, error) {
	var m Mix
	var seen [NumKinds]bool // by kind: "no" and " NO" are the same key
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		kind, known := mixKeys[k]
		if !ok || !known {
			return m, fmt.Errorf("mix entry %q: give key=percent with keys no, p, os, d, sl (e.g. no=45,p=43,os=4,d=4,sl=4)", part)
		}
		if seen[kind] {
			return m, fmt.Errorf("mix names %q twice", k)
		}
		seen[kind] = true
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 100 {
			return m, fmt.Errorf("mix entry %q: the percent must be a whole number 0..100", part)
		}
		m[kind] = n
	}
	total := 0
	for _, n := range m {
		total += n
	}
	if total != 100 {
		return m, fmt.Errorf("mix %q adds up to %d%%; the percentages must add up to 100", s, total)
	}
	if !unchecked {
		for k, lo := range minimumMix {
			if float64(m[k]) < lo {
				return m, fmt.Errorf("mix gives %s %d%%, below the spec's minimum of %.0f%% (5.2.3); add --mix-unchecked to allow it",
					Kind(k), m[k], lo)
			}
		}
	}
	return m, nil
}

// String renders the mix as percentages.
func (m Mix) String() string {
	total := 0
	for _, n := range m {
		total += n
	}
	parts := make([]string, 0, NumKinds)
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%.1f%%", Kind(k), 100*float64(n)/float64(total)))
	}
	return strings.Join(parts, ",")
}

// Deck deals cards of a mix in random order, reshuffling when it runs out,
// so every pass holds exactly the mix's proportions (5.2.4.2).
type Deck[T any] struct {
	cards []T
	next  int
}

// NewDeck returns a deck of the given cards.
func NewDeck[T any](cards []T) *Deck[T] {
	return &Deck[T]{cards: cards, next: len(cards)}
}

// Draw returns the next card.
func (d *Deck[T]) Draw(r *Rand) T {
	if d.next == len(d.cards) {
		for i := len(d.cards) - 1; i > 0; i-- {
			j := r.Intn(i + 1)
			d.cards[i], d.cards[j] = d.cards[j], d.cards[i]
		}
		d.next = 0
	}
	c := d.cards[d.next]
	d.next++
	return c
}

// NewMixDeck returns a deck that deals transaction types in the mix's proportions.
func NewMixDeck(m Mix) *Deck[Kind] {
	var cards []Kind
	for k, n := range m {
		for range n {
			cards = append(cards, Kind(k))
		}
	}
	return NewDeck(cards)
}

// newShareDeck deals true in exactly hits of every 100 draws.
func newShareDeck(hits int) *Deck[bool] {
	cards := make([]bool, 100)
	for i := range hits {
		cards[i] = true
	}
	return NewDeck(cards)
}
