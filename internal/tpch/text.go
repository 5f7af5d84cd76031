package tpch

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The comments of every table are cut from one pool of text, as the
// specification's generator makes it (clause 4.2.2.10; dbgen's text.c):
// 300 MiB of sentences from a small grammar, drawn on their own stream,
// made once. A comment is a piece of the pool at a random offset, of a
// random length.

// textPoolSize is the pool's length in bytes.
const textPoolSize = 300 * 1024 * 1024

var pool struct {
	once sync.Once
	text []byte
}

// textPool returns the pool, making it on first use (about a second).
func textPool() []byte {
	pool.once.Do(func() { pool.text = makeTextPool(textPoolSize) })
	return pool.text
}

// makeTextPool makes the first size bytes of the pool: sentences, each
// followed by a space, the last cut to fit.
func makeTextPool(size int) []byte {
	s := newStreams()
	text := poolBuffer(size + 4096)[:0] // room for the last sentence, cut below
	for len(text) < size {
		text = append(s.sentence(text, sTextPool), ' ')
	}
	return text[:size:size]
}

// sentence appends a sentence: a grammar form, its phrases, a terminator
// in place of the last phrase's trailing space.
func (s *streams) sentence(b []byte, i int) []byte {
	form := grammar[s.pick(grammar, i)].text
	for k := 0; k < len(form); k++ {
		switch form[k] {
		case 'V':
			b = s.phrase(b, &grammarWords.verbPhrases, i)
		case 'N':
			b = s.phrase(b, &grammarWords.nounPhrases, i)
		case 'P':
			b = append(b, s.draw(&grammarWords.prepositions, i)...)
			b = append(b, " the "...)
			b = s.phrase(b, &grammarWords.nounPhrases, i)
		case 'T':
			b = append(b[:len(b)-1], s.draw(&grammarWords.terminators, i)...)
		}
	}
	return b
}

// phrase appends a phrase of a form drawn from forms: for each of its
// tokens, a word of the part of speech the token's first letter names,
// then the token's punctuation if it has any, then a space.
func (s *streams) phrase(b []byte, forms *phraseForms, i int) []byte {
	for _, tok := range forms.forms[s.pickIndex(&forms.picker, i)] {
		b = append(b, s.draw(&tok.words, i)...)
		b = append(b, tok.punct...)
		b = append(b, ' ')
	}
	return b
}

// A picker draws a member of a distribution as pick does, by a table of
// its weights instead of a search: at[j-1] is the member a draw of j falls
// on. The grammar's distributions weigh at most 456 in all.
type picker struct {
	d  dist
	at []uint8
}

func newPicker(d dist) picker {
	p := picker{d: d, at: make([]uint8, d.total())}
	for j := range p.at {
		for int64(j+1) > d[p.at[j]].weight {
			p.at[j]++
		}
		if j+1 < len(p.at) {
			p.at[j+1] = p.at[j]
		}
	}
	return p
}

func (s *streams) pickIndex(p *picker, i int) int {
	return int(p.at[s.unif(1, int64(len(p.at)), i)-1])
}

func (s *streams) draw(p *picker, i int) string { return p.d[s.pickIndex(p, i)].text }

// phraseForms are a phrase's forms, parsed once into tokens.
type phraseForms struct {
	picker
	forms [][]token
}

// token is a word of a form: the words it is drawn from, and the
// punctuation after it.
type token struct {
	words picker
	punct string
}

// grammarWords are the pickers of the pool's grammar.
var grammarWords = func() (g struct {
	nounPhrases, verbPhrases                                 phraseForms
	prepositions, terminators                                picker
	articles, adjectives, adverbs, nouns, auxiliaries, verbs picker
}) {
	g.prepositions, g.terminators = newPicker(prepositions), newPicker(terminators)
	g.articles, g.adjectives, g.adverbs, g.nouns = newPicker(articles), newPicker(adjectives), newPicker(adverbs), newPicker(nouns)
	g.auxiliaries, g.verbs = newPicker(auxiliaries), newPicker(verbs)
	// A noun phrase's A, J, D and N; a verb phrase's D, X and V (its forms
	// have no punctuation).
	g.nounPhrases = parseForms(nounPhrases, map[byte]picker{'A': g.articles, 'J': g.adjectives, 'D': g.adverbs, 'N': g.nouns})
	g.verbPhrases = parseForms(verbPhrases, map[byte]picker{'D': g.adverbs, 'X': g.auxiliaries, 'V': g.verbs})
	return g
}()

func parseForms(forms dist, of map[byte]picker) phraseForms {
	pf := phraseForms{picker: newPicker(forms)}
	for _, f := range forms {
		var toks []token
		for _, w := range strings.Fields(f.text) {
			toks = append(toks, token{words: of[w[0]], punct: w[1:]})
		}
		pf.forms = append(pf.forms, toks)
	}
	return pf
}

// text appends a comment of a length averaging avg (0.4 to 1.6 times it),
// cut from the pool at an offset drawn first, on stream i (dbgen's TEXT).
func (s *streams) text(b []byte, avg int, i int) []byte {
	lo, hi := lengthBounds(avg)
	p := textPool()
	off := s.unif(0, textPoolSize-hi, i)
	n := s.unif(lo, hi, i)
	return append(b, p[off:off+n]...)
}

// poolBuffer is n bytes for the text pool, asked for on huge pages: every
// comment is a copy from a random offset in 300 MiB, and on 4 KiB pages
// nearly every one misses the TLB (a generator on one core made SF 1 in
// 10.3-11.6 s on huge pages, 11.6-12.1 s without). Where the kernel gives
// none, or the map fails, it is ordinary memory.
func poolBuffer(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint: without it the pool still works
	return b
}
