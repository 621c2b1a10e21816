package counts

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
	"unicode"
)

func TestCountAndEncode(t *testing.T) {
	got := Encode(Count([]byte("Go go GO! gopher, Gophers; 2 go-2 \xff go\xffgo")))
	want := "2 2\ngo 6\ngopher 1\ngophers 1\n"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len(Encode(Count(nil))) != 0 {
		t.Fatal("empty text must encode to nothing")
	}
}

func TestDecodeRejectsNonCanonical(t *testing.T) {
	bad := []string{
		"go 1",                     // no newline
		"go1\n",                    // no space
		"Go 1\n",                   // upper case
		"go 0\n",                   // zero count
		"go 01\n",                  // leading zero
		"go +1\n",                  // sign
		"go -1\n",                  // negative
		"go x\n",                   // not a number
		"b 1\na 1\n",               // unsorted
		"a 1\na 2\n",               // duplicate
		" 1\n",                     // empty word
		"a-b 1\n",                  // not a word
		"a 99999999999999999999\n", // overflow
		"\xff 1\n",                 // invalid UTF-8
	}
	for _, s := range bad {
		if _, err := Decode([]byte(s)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%q) = %v, want ErrMalformed", s, err)
		}
	}
	if _, err := Decode(make([]byte, MaxEncodedBytes+1)); !errors.Is(err, ErrMalformed) {
		t.Errorf("oversized input accepted")
	}
}

func TestMerge(t *testing.T) {
	total, err := Merge([][]byte{[]byte("a 1\nb 2\n"), nil, []byte("b 3\nc 1\n")})
	if err != nil || string(total) != "a 1\nb 5\nc 1\n" {
		t.Fatalf("Merge = %q, %v", total, err)
	}
	if _, err := Merge([][]byte{[]byte("a 18446744073709551615\n"), []byte("a 1\n")}); !errors.Is(err, ErrOverflow) {
		t.Fatalf("overflow: %v", err)
	}
	if _, err := Merge([][]byte{[]byte("a 1\n"), []byte("junk")}); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "block 1") {
		t.Fatalf("bad block: %v", err)
	}
}

func TestPack(t *testing.T) {
	text := []byte("alpha beta gamma—delta epsilon")
	data, err := Pack(text, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%8 != 0 {
		t.Fatalf("packed length %d not a multiple of 8", len(data))
	}
	want := "alpha   beta    gamma—delta   epsilon "
	if string(data) != want {
		t.Fatalf("Pack = %q, want %q", data, want)
	}
	if _, err := Pack([]byte("incomprehensibilities"), 8); !errors.Is(err, ErrWordTooLong) {
		t.Fatalf("long word: %v", err)
	}
	if _, err := Pack(text, 3); err == nil {
		t.Fatal("block size 3 accepted")
	}
}

// checkPack asserts the Pack invariant: counting block by block and merging
// equals counting the whole text.
func checkPack(t *testing.T, text []byte, blockSize int) {
	data, err := Pack(text, blockSize)
	if errors.Is(err, ErrWordTooLong) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%blockSize != 0 {
		t.Fatalf("packed length %d, block size %d", len(data), blockSize)
	}
	var outs [][]byte
	for off := 0; off < len(data); off += blockSize {
		outs = append(outs, Encode(Count(data[off:off+blockSize])))
	}
	total, err := Merge(outs)
	if err != nil {
		t.Fatal(err)
	}
	if want := Encode(Count(text)); !bytes.Equal(total, want) {
		t.Fatalf("blockwise %q != whole %q", total, want)
	}
}

func FuzzPack(f *testing.F) {
	f.Add([]byte("alpha beta gamma—delta epsilon"), uint8(8))
	f.Add([]byte("日本語のテキスト 日本"), uint8(5))
	f.Fuzz(func(t *testing.T, text []byte, size uint8) {
		checkPack(t, text, int(size%64)+4)
	})
}

// FuzzDecode: Decode never panics, and whatever it accepts re-encodes to the
// same bytes (the form is canonical).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("a 1\nb 22\n"))
	f.Add([]byte("straße 3\n"))
	f.Add([]byte("b 1\na 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		if again := Encode(c); !bytes.Equal(again, b) {
			t.Fatalf("accepted %q but re-encodes to %q", b, again)
		}
	})
}

// FuzzCount: whatever Count produces, Decode accepts.
func FuzzCount(f *testing.F) {
	f.Add([]byte("Hello, World! ǅ ΣΑΣ"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c := Count(text)
		got, err := Decode(Encode(c))
		if err != nil {
			t.Fatalf("Decode(Encode(Count(%q))): %v", text, err)
		}
		if !maps.Equal(got, c) {
			t.Fatalf("round trip changed the counts")
		}
	})
}

// TestLowerCaseIsStable checks, for every rune, that what Count emits is
// accepted by Decode: lower-casing a word rune yields a word rune that
// lower-cases to itself.
func TestLowerCaseIsStable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !IsWordRune(r) {
			continue
		}
		l := unicode.ToLower(r)
		if !IsWordRune(l) || unicode.ToLower(l) != l {
			t.Fatalf("rune %U lower-cases to %U, which is not a stable word rune", r, l)
		}
	}
}

// TestSum: block results joined end to end, as the concat assembly joins
// them, sum to the counts of the whole text, whichever way the tables
// meet (a word repeated across the seam, or tables that happen to stay
// sorted across it).
func TestSum(t *testing.T) {
	text := []byte("zebra apple. apple banana zebra; Über über 9 9 cat")
	packed, err := Pack(text, 13)
	if err != nil {
		t.Fatal(err)
	}
	var joined []byte
	for b := 0; b < len(packed); b += 13 {
		joined = append(joined, Encode(Count(packed[b:b+13]))...)
	}
	got, err := Sum(joined)
	if err != nil {
		t.Fatal(err)
	}
	if want := Encode(Count(text)); !bytes.Equal(got, want) {
		t.Fatalf("Sum:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{"apple 1", "Apple 1\n", "apple 0\n", "apple\n"} {
		if _, err := Sum([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Sum(%q): %v, want ErrMalformed", bad, err)
		}
	}
}

// FuzzSum: any bytes either fail with ErrMalformed or sum to a table in
// canonical form.
func FuzzSum(f *testing.F) {
	f.Add([]byte("apple 2\nzebra 1\napple 1\n"))
	f.Add([]byte(""))
	f.Add([]byte("a 18446744073709551615\na 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Sum(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOverflow) {
				t.Fatalf("Sum: unexpected error %v", err)
			}
			return
		}
		if _, err := Decode(got); err != nil {
			t.Fatalf("Sum's result does not decode: %v", err)
		}
	})
}
