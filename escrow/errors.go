package escrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// Errors of the client itself.
var (
	// ErrUnreachable: the chain did not answer within the retry budget.
	// Nothing was lost: a transaction that was signed is the same
	// transaction on every retry, so it can at most land once.
	ErrUnreachable = errors.New("escrow: chain unreachable")
	// ErrInsufficientFunds: the sender cannot pay the value plus gas.
	ErrInsufficientFunds = errors.New("escrow: insufficient funds")
	// ErrReverted: the contract refused the call; the error is a
	// *RevertError that also matches the contract error's own sentinel.
	ErrReverted = errors.New("escrow: reverted")
	// ErrWrongChain: the backend's chain ID is not the configured one.
	ErrWrongChain = errors.New("escrow: wrong chain ID")
	// ErrNoSigner: a transaction was asked of a read-only client.
	ErrNoSigner = errors.New("escrow: no transaction signer")
	// ErrNoContract: there is no code at the configured address.
	ErrNoContract = errors.New("escrow: no contract code at address")
	// ErrBadConfig: a Config or DeployParams failed validation.
	ErrBadConfig = errors.New("escrow: bad config")
	// ErrBadSettlement: a Settlement breaks the contract's rules (sorted,
	// distinct payees, matching lengths, culprits not paid, size limits),
	// or its signer list does (sorted, distinct, one signature each).
	ErrBadSettlement = errors.New("escrow: bad settlement")
	// ErrBadSignature: a settlement signature is malformed or not by the
	// claimed signer.
	ErrBadSignature = errors.New("escrow: bad settlement signature")
	// ErrBadEncoding: a wire message could not be decoded.
	ErrBadEncoding = errors.New("escrow: bad encoding")
	// ErrTooLarge: a wire message exceeds its size limit.
	ErrTooLarge = errors.New("escrow: message too large")
	// ErrNotReleased: WaitReleased saw the job refunded or aborted.
	ErrNotReleased = errors.New("escrow: job closed without release")
	// ErrBadTerms: a job's Terms failed validation (no signer required,
	// or a quiet period that does not fit the contract's uint32 seconds).
	ErrBadTerms = errors.New("escrow: bad job terms")
)

// Sentinels for the contract's custom errors; a *RevertError matches the one
// named by its Name.
var (
	ErrJobExists          = errors.New("escrow: job exists")
	ErrBadAmount          = errors.New("escrow: bad amount")
	ErrBadDeadline        = errors.New("escrow: bad deadline")
	ErrBadCommitment      = errors.New("escrow: bad seed commitment")
	ErrBadMinSigners      = errors.New("escrow: minimum signers must be at least 1")
	ErrJobNotFunded       = errors.New("escrow: job not funded")
	ErrJobExpired         = errors.New("escrow: job past its deadline")
	ErrDeadlineNotReached = errors.New("escrow: deadline not reached")
	ErrNotCreator         = errors.New("escrow: caller is not the job's creator")
	ErrWorkStarted        = errors.New("escrow: a processor has joined the job")
	ErrJoinClosed         = errors.New("escrow: the job no longer takes members")
	ErrNotStaked          = errors.New("escrow: active stake below the minimum")
	ErrAlreadyMember      = errors.New("escrow: already a member of the job")
	ErrTooManyMembers     = errors.New("escrow: the job has its most members")
	ErrNotMember          = errors.New("escrow: not a member of the job")
	ErrNoMembers          = errors.New("escrow: the job has no members")
	ErrTooEarly           = errors.New("escrow: the job's quiet period after the last join is not over")
	ErrBadSeed            = errors.New("escrow: seed does not match commitment")
	ErrLengthMismatch     = errors.New("escrow: list lengths differ")
	ErrPayeesNotSorted    = errors.New("escrow: payees not strictly ascending")
	ErrSignersNotSorted   = errors.New("escrow: signers not strictly ascending")
	ErrCulpritsNotSorted  = errors.New("escrow: culprits not strictly ascending")
	ErrCulpritIsPayee     = errors.New("escrow: culprit is a payee")
	ErrOverPayment        = errors.New("escrow: payouts exceed escrow")
	ErrSignatureRejected  = errors.New("escrow: contract rejected a signature")
	ErrSignerNotStaked    = errors.New("escrow: signer not staked")
	ErrQuorumNotReached   = errors.New("escrow: quorum of members not reached")
	ErrTooFewSigners      = errors.New("escrow: fewer signers than the job's minimum")
	ErrInsufficientStake  = errors.New("escrow: insufficient stake")
	ErrNothingToWithdraw  = errors.New("escrow: nothing to withdraw")
	ErrStakeLocked        = errors.New("escrow: stake still cooling down")
	ErrTransferFailed     = errors.New("escrow: transfer failed")
	ErrReentrant          = errors.New("escrow: reentrant call")
	ErrContractConfig     = errors.New("escrow: bad constructor parameters")
)

var contractErrors = map[string]error{
	"JobExists":          ErrJobExists,
	"BadAmount":          ErrBadAmount,
	"BadDeadline":        ErrBadDeadline,
	"BadCommitment":      ErrBadCommitment,
	"BadMinSigners":      ErrBadMinSigners,
	"JobNotFunded":       ErrJobNotFunded,
	"JobExpired":         ErrJobExpired,
	"DeadlineNotReached": ErrDeadlineNotReached,
	"NotCreator":         ErrNotCreator,
	"WorkStarted":        ErrWorkStarted,
	"JoinClosed":         ErrJoinClosed,
	"NotStaked":          ErrNotStaked,
	"AlreadyMember":      ErrAlreadyMember,
	"TooManyMembers":     ErrTooManyMembers,
	"NotMember":          ErrNotMember,
	"NoMembers":          ErrNoMembers,
	"TooEarly":           ErrTooEarly,
	"BadSeed":            ErrBadSeed,
	"LengthMismatch":     ErrLengthMismatch,
	"PayeesNotSorted":    ErrPayeesNotSorted,
	"SignersNotSorted":   ErrSignersNotSorted,
	"CulpritsNotSorted":  ErrCulpritsNotSorted,
	"CulpritIsPayee":     ErrCulpritIsPayee,
	"OverPayment":        ErrOverPayment,
	"BadSignature":       ErrSignatureRejected,
	"SignerNotStaked":    ErrSignerNotStaked,
	"QuorumNotReached":   ErrQuorumNotReached,
	"TooFewSigners":      ErrTooFewSigners,
	"InsufficientStake":  ErrInsufficientStake,
	"NothingToWithdraw":  ErrNothingToWithdraw,
	"StakeLocked":        ErrStakeLocked,
	"TransferFailed":     ErrTransferFailed,
	"Reentrant":          ErrReentrant,
	"BadConfig":          ErrContractConfig,
}

// RevertError is a call the contract refused, with its revert data decoded.
type RevertError struct {
	// Name is the custom error's name ("BadSeed"), "Error" for a
	// require-string revert, "Panic" for an assertion, or "" when the data
	// could not be decoded.
	Name string
	// Args are the error's decoded arguments, in ABI order.
	Args []any
	// Data is the raw revert data.
	Data []byte
}

func (e *RevertError) Error() string {
	switch {
	case e.Name == "":
		return fmt.Sprintf("escrow: reverted (data %x)", e.Data)
	case len(e.Args) == 0:
		return "escrow: reverted: " + e.Name
	default:
		return fmt.Sprintf("escrow: reverted: %s%v", e.Name, e.Args)
	}
}

// Is matches ErrReverted and the sentinel of the contract error.
func (e *RevertError) Is(target error) bool {
	if target == ErrReverted {
		return true
	}
	s, ok := contractErrors[e.Name]
	return ok && s == target
}

// decodeRevert turns revert data into a *RevertError using the contract ABI.
func decodeRevert(parsed *abi.ABI, data []byte) *RevertError {
	re := &RevertError{Data: data}
	if len(data) < 4 {
		return re
	}
	var id [4]byte
	copy(id[:], data[:4])
	switch id {
	case [4]byte{0x08, 0xc3, 0x79, 0xa0}: // Error(string)
		if reason, err := abi.UnpackRevert(data); err == nil {
			re.Name, re.Args = "Error", []any{reason}
		}
		return re
	case [4]byte{0x4e, 0x48, 0x7b, 0x71}: // Panic(uint256)
		if reason, err := abi.UnpackRevert(data); err == nil {
			re.Name, re.Args = "Panic", []any{reason}
		}
		return re
	}
	if parsed == nil {
		return re
	}
	e, err := parsed.ErrorByID(id)
	if err != nil {
		return re
	}
	args, err := e.Inputs.Unpack(data[4:])
	if err != nil {
		return re
	}
	re.Name, re.Args = e.Name, args
	return re
}

// classify turns a backend error into the package's errors: a revert with
// its data decoded, insufficient funds, or the error itself.
func classify(parsed *abi.ABI, err error) error {
	if err == nil {
		return nil
	}
	if data, ok := ethclient.RevertErrorData(err); ok {
		return decodeRevert(parsed, data)
	}
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) && strings.Contains(rpcErr.Error(), "insufficient funds") {
		// The node's only signal for this is its message text.
		return fmt.Errorf("%w: %v", ErrInsufficientFunds, err)
	}
	return err
}

// transient reports whether err means the chain could not be reached (so
// the same request may be tried again) rather than that it answered no.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) {
		return false // the node answered
	}
	var httpErr rpc.HTTPError
	if errors.As(err, &httpErr) {
		return httpErr.StatusCode >= 500 || httpErr.StatusCode == 429
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
