package microjob

import "errors"

// Errors, matched with errors.Is. Functions wrap them with the detail.
var (
	// ErrInvalidConfig: a Config field is out of range or missing.
	ErrInvalidConfig = errors.New("microjob: invalid config")
	// ErrInvalidInput: a Runner input is inconsistent (MicroJob not in the
	// plan, data of the wrong size, plan of another job), or Resolve was
	// given a third processor that is one of the dispute's sides.
	ErrInvalidInput = errors.New("microjob: invalid input")
	// ErrBlockFailed: running one block failed; the error also wraps the
	// executor's sentinel (wasm.ErrTrap, wasm.ErrTimeout, ...).
	ErrBlockFailed = errors.New("microjob: block failed")
	// ErrTooLarge: an encoding is longer than its size limit.
	ErrTooLarge = errors.New("microjob: encoding too large")
	// ErrMalformed: an encoding does not parse or a field is invalid.
	ErrMalformed = errors.New("microjob: malformed encoding")
	// ErrVersion: an encoding carries a version this package does not know.
	ErrVersion = errors.New("microjob: unsupported version")
	// ErrNonCanonical: an encoding parses but is not the one canonical
	// encoding of its value (key order, whitespace, case, number form).
	ErrNonCanonical = errors.New("microjob: non-canonical encoding")
	// ErrMismatch: a disclosure does not match the commitment.
	ErrMismatch = errors.New("microjob: disclosure does not match commitment")
	// ErrPlan: the plan does not belong to the JobInfo.
	ErrPlan = errors.New("microjob: plan does not match job")
	// ErrUnknownDispute: Resolve was given a dispute the verdict does not hold.
	ErrUnknownDispute = errors.New("microjob: unknown dispute")
	// ErrNotReady: the verdict does not allow assembly yet (missing
	// results, open disputes, MicroJobs to redo).
	ErrNotReady = errors.New("microjob: verdict not ready for assembly")
	// ErrOutput: a stored block output is missing or does not hash to its
	// disclosed hash.
	ErrOutput = errors.New("microjob: bad block output")
)
