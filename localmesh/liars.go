package localmesh

// RationalLiar is the output rewrite (processor.Config.Tamper) of a
// processor that lies where a lie is cheapest to hide, in jobs of k blocks
// per MicroJob: in the blocks b with b mod k = 0 (about one per MicroJob),
// and never in a verifier or a re-run, where a lie stands out. The checks
// are hidden until its results are committed, so it cannot aim its lies
// at unchecked blocks: a MicroJob it lies in l blocks of is caught with
// probability l/k.
func RationalLiar(k uint64) func(block uint64, check bool, out []byte) []byte {
	return func(b uint64, check bool, out []byte) []byte {
		if check || !RationalLies(k, b) {
			return out
		}
		return append(out, 0x42)
	}
}

// RationalLies reports whether RationalLiar(k) lies in block b of a
// MicroJob it runs.
func RationalLies(k, b uint64) bool { return b%k == 0 }
