package jobs

// Shape is the size of a job's plan, known before it is sliced: what a
// submitter is told before publishing. Slice builds the same counts.
type Shape struct {
	Blocks    uint64 // ceil(data size / block size)
	MacroJobs uint64 // ceil(Blocks / (N·K))
	Regular   uint64 // regular MicroJobs: ceil(Blocks / K)
	Verifiers uint64 // verifier MicroJobs: one per MacroJob
	// Runs is every MicroJob (regular and verifier) times the replicas:
	// the runs the job's price pays for.
	Runs uint64
}

// MicroJobs is the number of MicroJobs, verifiers included.
func (s Shape) MicroJobs() uint64 { return s.Regular + s.Verifiers }

// ShapeOf is the shape of a job of size bytes of data sliced by sl with
// replicas processors per MicroJob, after the defaults (ApplyDefaults)
// for zero counts; a zero block size gives the zero Shape.
func ShapeOf(size uint64, sl Slicing, replicas uint32) Shape {
	j := JobInfo{Data: Data{Size: size}, Slicing: sl, Requirements: Requirements{Replicas: replicas}}
	j.ApplyDefaults()
	if j.Slicing.BlockSize == 0 {
		return Shape{}
	}
	n, k := uint64(j.Slicing.MicroJobs), uint64(j.Slicing.BlocksPerMicro)
	s := Shape{Blocks: j.NumBlocks()}
	s.MacroJobs = ceilDiv(s.Blocks, n*k)
	s.Regular = ceilDiv(s.Blocks, k)
	s.Verifiers = s.MacroJobs
	s.Runs = s.MicroJobs() * uint64(j.Requirements.Replicas)
	return s
}
