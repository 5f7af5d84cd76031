package tpch

import "sync"

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
	text := make([]byte, 0, size)
	var sentence []byte
	for len(text) < size {
		sentence = s.sentence(sentence[:0], sTextPool)
		if need := size - len(text); need >= len(sentence)+1 {
			text = append(text, sentence...)
			text = append(text, ' ')
		} else {
			text = append(text, sentence[:need]...)
		}
	}
	return text
}

// sentence appends a sentence: a grammar form, its phrases, a terminator
// in place of the last phrase's trailing space.
func (s *streams) sentence(b []byte, i int) []byte {
	form := grammar[s.pick(grammar, i)].text
	for k := 0; k < len(form); k++ {
		switch form[k] {
		case 'V':
			b = s.verbPhrase(b, i)
		case 'N':
			b = s.nounPhrase(b, i)
		case 'P':
			b = append(b, prepositions[s.pick(prepositions, i)].text...)
			b = append(b, " the "...)
			b = s.nounPhrase(b, i)
		case 'T':
			b = append(b[:len(b)-1], terminators[s.pick(terminators, i)].text...)
		}
	}
	return b
}

// nounPhrase appends a noun phrase's words, each with the punctuation its
// form gives it and a space.
func (s *streams) nounPhrase(b []byte, i int) []byte {
	return s.phrase(b, nounPhrases, i, func(c byte) dist {
		switch c {
		case 'A':
			return articles
		case 'J':
			return adjectives
		case 'D':
			return adverbs
		}
		return nouns
	})
}

// verbPhrase appends a verb phrase, as nounPhrase. Verb phrase forms have
// no punctuation.
func (s *streams) verbPhrase(b []byte, i int) []byte {
	return s.phrase(b, verbPhrases, i, func(c byte) dist {
		switch c {
		case 'D':
			return adverbs
		case 'X':
			return auxiliaries
		}
		return verbs
	})
}

// phrase appends a phrase of a form drawn from forms: a word of the part
// of speech each token's first letter names, then the token's punctuation
// if it has any, then a space.
func (s *streams) phrase(b []byte, forms dist, i int, of func(byte) dist) []byte {
	form := forms[s.pick(forms, i)].text
	for start := 0; start < len(form); {
		end := start
		for end < len(form) && form[end] != ' ' {
			end++
		}
		if end > start {
			words := of(form[start])
			b = append(b, words[s.pick(words, i)].text...)
			b = append(b, form[start+1:end]...)
			b = append(b, ' ')
		}
		start = end + 1
	}
	return b
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
