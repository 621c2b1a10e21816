// Package macrojob holds MacroJob rooms and the in-memory MicroJob queue with
// its owner handoff, written as a pure state machine.
package macrojob
