package checksim

import "testing"

// BenchmarkDetection runs Suite at the defaults, the figures that
// `jobnode checksim` prints too, and logs the table (-v: the log of a
// benchmark is cut to ten lines without it):
//
//	go test -v -run '^$' -bench Detection -benchtime 1x ./checksim
func BenchmarkDetection(b *testing.B) {
	var rep Report
	for b.Loop() {
		var err error
		if rep, err = Suite(DefaultConfig()); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range rep.Rows {
		switch {
		case r.Adversary == "falsifier":
			b.ReportMetric(r.Job.P(), "caught/job-falsifier")
			b.ReportMetric(r.Redundancy(), "redundancy")
		case r.Adversary == "rational" && r.Checks == "reveal":
			b.ReportMetric(r.Micro.P(), "caught/microjob-rational")
		}
	}
	b.Log("\n" + rep.Table())
}
