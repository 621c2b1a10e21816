// Package cpuprof splits the process's CPU time by a pprof label.
package cpuprof

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/pprof"
	"time"

	"github.com/google/pprof/profile"
)

// Profile samples the process's CPU while it runs and splits it by the
// value of one pprof label: what each labelled part of the process (a
// member of an in-process mesh) spent. The runtime samples 100 times a
// second, so a part's figure is good to about 10 ms of CPU.
type Profile struct {
	key string
	buf bytes.Buffer
}

// Start starts the process's CPU profile; only one runs at a time
// (not beside go test's -cpuprofile).
func Start(key string) (*Profile, error) {
	p := &Profile{key: key}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		return nil, fmt.Errorf("cpuprof: %w", err)
	}
	return p, nil
}

// Stop ends the profile and returns the CPU time by the label's value;
// CPU spent by goroutines without the label (the runtime's own GC
// workers among them) is under "".
func (p *Profile) Stop() (map[string]time.Duration, error) {
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return nil, fmt.Errorf("cpuprof: reading the profile: %w", err)
	}
	col := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			col = i
		}
	}
	if col < 0 {
		return nil, errors.New("cpuprof: the profile has no CPU samples column")
	}
	out := map[string]time.Duration{}
	for _, s := range prof.Sample {
		var v string
		if vs := s.Label[p.key]; len(vs) > 0 {
			v = vs[0]
		}
		out[v] += time.Duration(s.Value[col])
	}
	return out, nil
}
