package checksim

// Suite runs every adversary of the issue against base (its Adversary,
// Lapse and Public are set per row): the naive liar, the whole-MicroJob
// falsifier, the rational liar under the public-seed baseline, a revealed
// seed and a lapse seed, the copier, colluding coalitions of P/8 and P/4
// processors (at least one), and the grinder under a revealed and a lapse
// seed.
func Suite(base Config) (Report, error) {
	base.applyDefaults()
	row := func(a Adversary, checks string) Config {
		c := base
		c.Adversary, c.Lapse, c.Public = a, checks == "lapse", checks == "public"
		return c
	}
	cfgs := []Config{
		row(Naive{Q: 0.1}, "reveal"),
		row(Falsifier{}, "reveal"),
		row(Rational{}, "public"),
		row(Rational{}, "reveal"),
		row(Rational{}, "lapse"),
		row(Copier{}, "reveal"),
		row(Colluding{Size: max(1, base.Processors/8)}, "reveal"),
		row(Colluding{Size: max(1, base.Processors/4)}, "reveal"),
		row(Grinder{}, "reveal"),
		row(Grinder{}, "lapse"),
	}
	var out Report
	for _, c := range cfgs {
		rep, err := Run(c)
		if err != nil {
			return Report{}, err
		}
		out.Rows = append(out.Rows, rep.Rows...)
	}
	return out, nil
}
