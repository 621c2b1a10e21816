// Package jobs holds JobInfo, its validation and canonical ID, and the pure
// slicing of a job into MacroJobs and MicroJobs.
package jobs
