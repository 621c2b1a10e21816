// Package counts is the shared code of the wordcount example job: counting
// the words of one block, the canonical text form of a count table, merging
// block results into the job's total (the "wordcount" assembler), and packing
// text into fixed-size blocks that never cut a word.
//
// # Canonical form
//
// A word is a maximal run of Unicode letters and digits, lower-cased. A count
// table is written as one line per word, "<word> <count>\n", with count in
// decimal without leading zeros, lines sorted by the bytes of the word, each
// word once. An empty table is the empty string. Decode accepts exactly this
// form, so two processors that agree on the counts agree on the bytes.
package counts

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// MaxEncodedBytes bounds what Decode reads (one block result or a merged
// total).
const MaxEncodedBytes = 64 << 20

// Errors, matched with errors.Is.
var (
	// ErrMalformed: a count table that is not in canonical form.
	ErrMalformed = errors.New("counts: malformed count table")
	// ErrWordTooLong: Pack met a word longer than the block size.
	ErrWordTooLong = errors.New("counts: word longer than a block")
	// ErrOverflow: a merged count does not fit in 64 bits.
	ErrOverflow = errors.New("counts: count overflow")
)

// IsWordRune reports whether r is part of a word.
func IsWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Count returns the word frequencies of text. Invalid UTF-8 separates words.
func Count(text []byte) map[string]uint64 {
	counts := make(map[string]uint64)
	var word []byte
	flush := func() {
		if len(word) > 0 {
			counts[string(word)]++
			word = word[:0]
		}
	}
	for len(text) > 0 {
		r, n := utf8.DecodeRune(text)
		text = text[n:]
		if r != utf8.RuneError && IsWordRune(r) {
			word = utf8.AppendRune(word, unicode.ToLower(r))
			continue
		}
		flush()
	}
	flush()
	return counts
}

// Encode writes counts in canonical form. Zero counts are left out.
func Encode(counts map[string]uint64) []byte {
	var b []byte
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		if counts[w] == 0 {
			continue
		}
		b = append(b, w...)
		b = append(b, ' ')
		b = strconv.AppendUint(b, counts[w], 10)
		b = append(b, '\n')
	}
	return b
}

// Decode parses a count table in canonical form.
func Decode(b []byte) (map[string]uint64, error) {
	if len(b) > MaxEncodedBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(b), MaxEncodedBytes)
	}
	counts := make(map[string]uint64)
	var prev []byte
	for line := 1; len(b) > 0; line++ {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			return nil, fmt.Errorf("%w: line %d has no newline", ErrMalformed, line)
		}
		word, num, ok := bytes.Cut(b[:end], []byte{' '})
		b = b[end+1:]
		if !ok {
			return nil, fmt.Errorf("%w: line %d has no space", ErrMalformed, line)
		}
		if !canonicalWord(word) {
			return nil, fmt.Errorf("%w: line %d: %q is not a lower-case word", ErrMalformed, line, word)
		}
		if prev != nil && bytes.Compare(prev, word) >= 0 {
			return nil, fmt.Errorf("%w: line %d: %q not after %q", ErrMalformed, line, word, prev)
		}
		n, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil || n == 0 || num[0] == '0' || num[0] == '+' {
			return nil, fmt.Errorf("%w: line %d: count %q", ErrMalformed, line, num)
		}
		counts[string(word)] = n
		prev = word
	}
	return counts, nil
}

func canonicalWord(w []byte) bool {
	if len(w) == 0 {
		return false
	}
	for len(w) > 0 {
		r, n := utf8.DecodeRune(w)
		if r == utf8.RuneError || !IsWordRune(r) || unicode.ToLower(r) != r {
			return false
		}
		w = w[n:]
	}
	return true
}

// Merge sums block results into the job's total, in canonical form.
func Merge(outputs [][]byte) ([]byte, error) {
	total := make(map[string]uint64)
	for i, out := range outputs {
		c, err := Decode(out)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		for w, n := range c {
			if total[w] > math.MaxUint64-n {
				return nil, fmt.Errorf("%w: %q", ErrOverflow, w)
			}
			total[w] += n
		}
	}
	return Encode(total), nil
}

// Pack lays text out in blocks of exactly blockSize bytes, cutting only
// between runes where at least one side is not a word rune, and padding each
// block with spaces. Counting the blocks one by one and merging gives the
// counts of text.
func Pack(text []byte, blockSize int) ([]byte, error) {
	if blockSize < utf8.UTFMax {
		return nil, fmt.Errorf("counts: block size %d below %d", blockSize, utf8.UTFMax)
	}
	out := make([]byte, 0, len(text)+len(text)/blockSize+blockSize)
	for len(text) > 0 {
		cut := len(text)
		if cut > blockSize {
			cut = boundary(text, blockSize)
			if cut == 0 {
				return nil, fmt.Errorf("%w: near %q", ErrWordTooLong, text[:min(len(text), 32)])
			}
		}
		out = append(out, text[:cut]...)
		out = append(out, bytes.Repeat([]byte{' '}, blockSize-cut)...)
		text = text[cut:]
	}
	return out, nil
}

// boundary returns the largest cut in (0, limit] that splits text between
// runes and not inside a word, or 0.
func boundary(text []byte, limit int) int {
	for c := limit; c > 0; c-- {
		if !utf8.RuneStart(text[c]) {
			continue
		}
		before, _ := utf8.DecodeLastRune(text[:c])
		after, _ := utf8.DecodeRune(text[c:])
		if !(word(before) && word(after)) {
			return c
		}
	}
	return 0
}

func word(r rune) bool { return r != utf8.RuneError && IsWordRune(r) }

// Sum totals block results joined end to end, as the concat assembly
// joins them: each line "<word> <count>\n" in canonical form, a word on
// as many lines as blocks that hold it. The total is in canonical form
// (Decode reads it).
func Sum(joined []byte) ([]byte, error) {
	if len(joined) > MaxEncodedBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrMalformed, len(joined), MaxEncodedBytes)
	}
	var tables [][]byte
	start := 0
	var prev []byte
	for i := 0; i < len(joined); {
		end := bytes.IndexByte(joined[i:], '\n')
		if end < 0 {
			return nil, fmt.Errorf("%w: the last line has no newline", ErrMalformed)
		}
		word, _, _ := bytes.Cut(joined[i:i+end], []byte{' '})
		// A word not after the one before starts the next block's table.
		if prev != nil && bytes.Compare(prev, word) >= 0 {
			tables = append(tables, joined[start:i])
			start = i
		}
		prev = word
		i += end + 1
	}
	if start < len(joined) {
		tables = append(tables, joined[start:])
	}
	return Merge(tables)
}
