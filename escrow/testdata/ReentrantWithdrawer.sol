// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

interface IEscrow {
    function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline, uint32 quiet, uint8 minSigners)
        external
        payable;
    function jobKey(address creator, bytes32 jobId) external pure returns (bytes32);
    function abort(bytes32 key) external;
    function withdraw() external;
    function stake() external payable;
    function requestUnstake(uint256 amount) external;
    function withdrawStake() external;
}

/// @notice Test attacker: when the escrow pays it, it calls back into the
/// escrow (withdraw or withdrawStake) to try to be paid twice. It records
/// whether the reentrant call went through and the revert data it got.
contract ReentrantWithdrawer {
    IEscrow public immutable escrow;
    uint256 public reentries; // reentrant calls that succeeded
    uint256 public attempts; // reentrant calls tried
    bytes public lastRevert; // revert data of the last refused reentrant call
    uint8 internal mode; // 1: re-enter withdraw, 2: re-enter withdrawStake

    constructor(IEscrow escrow_) {
        escrow = escrow_;
    }

    function createAndAbort(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) external payable {
        escrow.createJob{value: msg.value}(jobId, seedCommitment, deadline, 0, 1);
        escrow.abort(escrow.jobKey(address(this), jobId));
    }

    function stakeAndRequest() external payable {
        escrow.stake{value: msg.value}();
        escrow.requestUnstake(msg.value);
    }

    function attackWithdraw() external {
        mode = 1;
        escrow.withdraw();
        mode = 0;
    }

    function attackWithdrawStake() external {
        mode = 2;
        escrow.withdrawStake();
        mode = 0;
    }

    receive() external payable {
        if (mode == 0 || attempts >= 3) return;
        ++attempts;
        if (mode == 1) {
            try escrow.withdraw() {
                ++reentries;
            } catch (bytes memory reason) {
                lastRevert = reason;
            }
        } else {
            try escrow.withdrawStake() {
                ++reentries;
            } catch (bytes memory reason) {
                lastRevert = reason;
            }
        }
    }
}
