// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title jobmesh settlement escrow
/// @notice Holds a job's price until the mesh settles it, refunds it after its
/// deadline or aborts it; holds processors' stakes and burns the stake of a
/// culprit named in a settled verdict. Every payment is a pull payment
/// (credit, then `withdraw`), so the only external calls are the two
/// withdrawals, each made after its state change and under a reentrancy guard.
contract Escrow {
    // ---------------------------------------------------------------- states
    uint8 internal constant STATE_NONE = 0;
    uint8 internal constant STATE_FUNDED = 1;
    uint8 internal constant STATE_SETTLED = 2;
    uint8 internal constant STATE_REFUNDED = 3;
    uint8 internal constant STATE_ABORTED = 4;

    /// Upper bound on payees (and culprits) per settlement, so settle's gas
    /// is bounded.
    uint256 public constant MAX_PAYEES = 256;

    // A job fits two storage slots so createJob costs two fresh slots.
    // Slot 0: creator and price. Slot 1: while Funded, the first 26 bytes of
    // the seed commitment (the full commitment is in JobCreated); once the
    // job is closed, the block number that closed it, so a client can fetch
    // the closing event without scanning the whole chain.
    struct Job {
        address creator;
        uint96 amount;
        uint208 commitOrBlock;
        uint40 deadline;
        uint8 state;
    }

    // An account's stake and credit share one slot: a staked processor's
    // slot is never zero, so crediting it costs a warm nonzero write.
    struct Account {
        uint128 stake; // active stake, counted for quorum and selection
        uint128 credit; // pull-payment balance
        uint128 pending; // stake waiting out the cool-down, still slashable
        uint64 unlockAt; // when pending may be withdrawn
    }

    // ---------------------------------------------------------------- EIP-712
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant NAME_HASH = keccak256("jobmesh-escrow");
    bytes32 internal constant VERSION_HASH = keccak256("1");
    bytes32 public constant SETTLEMENT_TYPEHASH = keccak256(
        "Settlement(bytes32 jobId,bytes32 seed,bytes32 resultRoot,bytes32 verifierHash,address[] payees,uint256[] amounts,address[] culprits)"
    );
    // secp256k1n / 2: signatures with a higher s are malleable copies.
    uint256 internal constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    // ---------------------------------------------------------------- config
    uint256 public immutable minStake;
    uint256 public immutable quorumNumerator;
    uint256 public immutable quorumDenominator;
    uint256 public immutable unstakeCooldown;
    uint256 internal immutable cachedChainId;
    bytes32 internal immutable cachedDomainSeparator;

    // ---------------------------------------------------------------- storage
    mapping(bytes32 => Job) internal jobs;
    mapping(address => Account) internal accounts;
    /// Stake burned by slashing; it stays locked in this contract forever.
    uint256 public totalBurned;
    bool internal transient locked;

    // ---------------------------------------------------------------- events
    event JobCreated(
        bytes32 indexed jobId, address indexed creator, uint256 amount, bytes32 seedCommitment, uint64 deadline
    );
    event EscrowReleased(
        bytes32 indexed jobId,
        bytes32 resultRoot,
        bytes32 verifierHash,
        address[] payees,
        uint256[] amounts,
        uint256 refund
    );
    event Refunded(bytes32 indexed jobId, address indexed creator, uint256 amount);
    event JobAborted(bytes32 indexed jobId, address indexed creator, uint256 amount);
    event Staked(address indexed processor, uint256 amount, uint256 total);
    event UnstakeRequested(address indexed processor, uint256 amount, uint64 unlockAt);
    event StakeWithdrawn(address indexed processor, uint256 amount);
    event Slashed(bytes32 indexed jobId, address indexed culprit, uint256 amount);
    event Withdrawn(address indexed account, uint256 amount);

    // ---------------------------------------------------------------- errors
    error BadConfig();
    error Reentrant();
    error JobExists(bytes32 jobId);
    error BadAmount();
    error BadDeadline(uint256 deadline, uint256 now_);
    error BadCommitment();
    error JobNotFunded(bytes32 jobId, uint8 state);
    error JobExpired(bytes32 jobId, uint256 deadline);
    error DeadlineNotReached(bytes32 jobId, uint256 deadline);
    error NotCreator(address caller, address creator);
    error BadSeed(bytes32 jobId);
    error LengthMismatch();
    error TooManyPayees(uint256 count, uint256 max);
    error PayeesNotSorted(uint256 index);
    error CulpritsNotSorted(uint256 index);
    error CulpritIsPayee(address culprit);
    error OverPayment(uint256 total, uint256 escrow);
    error BadSignature(uint256 index);
    error SignerNotStaked(address signer, uint256 stake, uint256 minStake);
    error QuorumNotReached(uint256 signatures, uint256 payees);
    error InsufficientStake(uint256 requested, uint256 stake);
    error NothingToWithdraw();
    error StakeLocked(uint64 unlockAt);
    error TransferFailed(address to, uint256 amount);

    modifier nonReentrant() {
        if (locked) revert Reentrant();
        locked = true;
        _;
        locked = false;
    }

    /// @param minStake_ stake a signer needs for its signature to count.
    /// @param quorumNumerator_ with quorumDenominator_: the share of payees
    /// that must sign a settlement; at least 2/3.
    /// @param unstakeCooldown_ seconds between requestUnstake and withdrawStake.
    constructor(uint256 minStake_, uint256 quorumNumerator_, uint256 quorumDenominator_, uint256 unstakeCooldown_) {
        if (
            minStake_ == 0 || quorumDenominator_ == 0 || quorumNumerator_ > quorumDenominator_
                || quorumNumerator_ * 3 < quorumDenominator_ * 2 || quorumDenominator_ > type(uint64).max
        ) revert BadConfig();
        minStake = minStake_;
        quorumNumerator = quorumNumerator_;
        quorumDenominator = quorumDenominator_;
        unstakeCooldown = unstakeCooldown_;
        cachedChainId = block.chainid;
        cachedDomainSeparator = _buildDomainSeparator();
    }

    // ================================================================ jobs

    /// @notice Locks msg.value as the price of job `jobId`.
    /// @param seedCommitment keccak256 of the job's 32-byte seed.
    /// @param deadline unix time until which the job may be settled; after
    /// it, anyone may refund it to its creator.
    function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) external payable nonReentrant {
        if (jobs[jobId].state != STATE_NONE) revert JobExists(jobId);
        if (msg.value == 0 || msg.value > type(uint96).max) revert BadAmount();
        if (deadline <= block.timestamp || deadline > type(uint40).max) revert BadDeadline(deadline, block.timestamp);
        if (seedCommitment == bytes32(0)) revert BadCommitment();
        jobs[jobId] = Job({
            creator: msg.sender,
            amount: uint96(msg.value),
            commitOrBlock: uint208(uint256(seedCommitment) >> 48),
            deadline: uint40(deadline),
            state: STATE_FUNDED
        });
        emit JobCreated(jobId, msg.sender, msg.value, seedCommitment, deadline);
    }

    /// @notice Releases the escrow of `jobId` on a verdict signed by a quorum
    /// of its payees, and burns the stake of every culprit it names.
    /// @param payees strictly ascending addresses (so they are distinct).
    /// @param amounts amounts[i] is credited to payees[i]; the rest of the
    /// escrow is credited to the creator.
    /// @param culprits strictly ascending, none of them a payee.
    /// @param signatures signatures[i] is payees[i]'s 65-byte EIP-712
    /// signature over the settlement, or empty if it did not sign.
    function settle(
        bytes32 jobId,
        bytes32 seed,
        bytes32 resultRoot,
        bytes32 verifierHash,
        address[] calldata payees,
        uint256[] calldata amounts,
        address[] calldata culprits,
        bytes[] calldata signatures
    ) external nonReentrant {
        Job storage job = jobs[jobId];
        Job memory j = job;
        if (j.state != STATE_FUNDED) revert JobNotFunded(jobId, j.state);
        if (block.timestamp > j.deadline) revert JobExpired(jobId, j.deadline);
        if (uint208(uint256(keccak256(abi.encodePacked(seed))) >> 48) != j.commitOrBlock) revert BadSeed(jobId);

        uint256 n = payees.length;
        if (n == 0 || amounts.length != n || signatures.length != n) revert LengthMismatch();
        if (n > MAX_PAYEES || culprits.length > MAX_PAYEES) revert TooManyPayees(n, MAX_PAYEES);

        bytes32 digest = settlementDigest(jobId, seed, resultRoot, verifierHash, payees, amounts, culprits);

        uint256 total;
        uint256 signed;
        address prev;
        uint256 min = minStake;
        for (uint256 i; i < n; ++i) {
            address p = payees[i];
            if (p <= prev) revert PayeesNotSorted(i);
            prev = p;
            total += amounts[i];
            if (signatures[i].length != 0) {
                if (_recover(digest, signatures[i]) != p) revert BadSignature(i);
                uint256 s = accounts[p].stake;
                if (s < min) revert SignerNotStaked(p, s, min);
                ++signed;
            }
        }
        if (total > j.amount) revert OverPayment(total, j.amount);
        if (signed * quorumDenominator < n * quorumNumerator) revert QuorumNotReached(signed, n);
        _checkCulprits(payees, culprits);

        // Effects. The job closes before anything is credited.
        job.state = STATE_SETTLED;
        job.commitOrBlock = uint208(block.number);
        for (uint256 i; i < n; ++i) {
            accounts[payees[i]].credit += uint128(amounts[i]);
        }
        uint256 rest = j.amount - total;
        if (rest != 0) accounts[j.creator].credit += uint128(rest);
        for (uint256 i; i < culprits.length; ++i) {
            _slash(jobId, culprits[i]);
        }
        emit EscrowReleased(jobId, resultRoot, verifierHash, payees, amounts, rest);
    }

    /// @notice After the deadline, credits the whole escrow back to the
    /// creator. Anyone may call it; the money only goes to the creator.
    function refund(bytes32 jobId) external nonReentrant {
        Job storage job = jobs[jobId];
        Job memory j = job;
        if (j.state != STATE_FUNDED) revert JobNotFunded(jobId, j.state);
        if (block.timestamp <= j.deadline) revert DeadlineNotReached(jobId, j.deadline);
        job.state = STATE_REFUNDED;
        job.commitOrBlock = uint208(block.number);
        accounts[j.creator].credit += uint128(j.amount);
        emit Refunded(jobId, j.creator, j.amount);
    }

    /// @notice Credits the escrow back to the creator of a job the mesh
    /// evicted from its queue (Crynux TaskAborted). Only the creator may
    /// call it, and only while the job is not settled.
    function abort(bytes32 jobId) external nonReentrant {
        Job storage job = jobs[jobId];
        Job memory j = job;
        if (j.state != STATE_FUNDED) revert JobNotFunded(jobId, j.state);
        if (msg.sender != j.creator) revert NotCreator(msg.sender, j.creator);
        job.state = STATE_ABORTED;
        job.commitOrBlock = uint208(block.number);
        accounts[j.creator].credit += uint128(j.amount);
        emit JobAborted(jobId, j.creator, j.amount);
    }

    /// @notice Pays out the caller's credit.
    function withdraw() external nonReentrant {
        Account storage a = accounts[msg.sender];
        uint256 amount = a.credit;
        if (amount == 0) revert NothingToWithdraw();
        a.credit = 0;
        emit Withdrawn(msg.sender, amount);
        (bool ok,) = msg.sender.call{value: amount}("");
        if (!ok) revert TransferFailed(msg.sender, amount);
    }

    // ================================================================ staking

    function stake() external payable nonReentrant {
        if (msg.value == 0 || msg.value > type(uint96).max) revert BadAmount();
        Account storage a = accounts[msg.sender];
        uint128 total = a.stake + uint128(msg.value);
        a.stake = total;
        emit Staked(msg.sender, msg.value, total);
    }

    /// @notice Moves `amount` of active stake into the cool-down. It stops
    /// counting for quorum at once but stays slashable until withdrawn. A
    /// new request restarts the cool-down for everything pending.
    function requestUnstake(uint256 amount) external nonReentrant {
        Account storage a = accounts[msg.sender];
        if (amount == 0 || amount > a.stake) revert InsufficientStake(amount, a.stake);
        a.stake -= uint128(amount);
        a.pending += uint128(amount);
        uint64 unlockAt = uint64(block.timestamp + unstakeCooldown);
        a.unlockAt = unlockAt;
        emit UnstakeRequested(msg.sender, amount, unlockAt);
    }

    function withdrawStake() external nonReentrant {
        Account storage a = accounts[msg.sender];
        uint256 amount = a.pending;
        if (amount == 0) revert NothingToWithdraw();
        if (block.timestamp < a.unlockAt) revert StakeLocked(a.unlockAt);
        a.pending = 0;
        a.unlockAt = 0;
        emit StakeWithdrawn(msg.sender, amount);
        (bool ok,) = msg.sender.call{value: amount}("");
        if (!ok) revert TransferFailed(msg.sender, amount);
    }

    // ================================================================ views

    /// @notice A job's record. `closedAtBlock` is 0 while the job is Funded.
    function getJob(bytes32 jobId)
        external
        view
        returns (address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock)
    {
        Job memory j = jobs[jobId];
        creator = j.creator;
        amount = j.amount;
        deadline = j.deadline;
        state = j.state;
        if (j.state > STATE_FUNDED) closedAtBlock = j.commitOrBlock;
    }

    /// @notice A processor's stake: active (counted for quorum and by the
    /// dispatcher), pending (cooling down) and when pending unlocks.
    function stakeOf(address processor) external view returns (uint256 active, uint256 pending, uint64 unlockAt) {
        Account memory a = accounts[processor];
        return (a.stake, a.pending, a.unlockAt);
    }

    function creditOf(address account) external view returns (uint256) {
        return accounts[account].credit;
    }

    function domainSeparator() public view returns (bytes32) {
        if (block.chainid == cachedChainId) return cachedDomainSeparator;
        return _buildDomainSeparator();
    }

    /// @notice The EIP-712 digest a payee signs for a settlement.
    function settlementDigest(
        bytes32 jobId,
        bytes32 seed,
        bytes32 resultRoot,
        bytes32 verifierHash,
        address[] calldata payees,
        uint256[] calldata amounts,
        address[] calldata culprits
    ) public view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(
                SETTLEMENT_TYPEHASH,
                jobId,
                seed,
                resultRoot,
                verifierHash,
                keccak256(abi.encodePacked(payees)),
                keccak256(abi.encodePacked(amounts)),
                keccak256(abi.encodePacked(culprits))
            )
        );
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    // ================================================================ internal

    function _buildDomainSeparator() internal view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    function _recover(bytes32 digest, bytes calldata sig) internal pure returns (address) {
        if (sig.length != 65) return address(0);
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        uint8 v = uint8(sig[64]);
        if (uint256(s) > HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    // Both lists are sorted, so one merge pass proves culprits are distinct
    // and that none of them is paid.
    function _checkCulprits(address[] calldata payees, address[] calldata culprits) internal pure {
        uint256 j;
        address prev;
        for (uint256 i; i < culprits.length; ++i) {
            address c = culprits[i];
            if (c <= prev) revert CulpritsNotSorted(i);
            prev = c;
            while (j < payees.length && payees[j] < c) ++j;
            if (j < payees.length && payees[j] == c) revert CulpritIsPayee(c);
        }
    }

    // Burns the culprit's whole stake, active and cooling down alike: the
    // signers gain nothing from naming a culprit, so no one profits from a
    // false accusation.
    function _slash(bytes32 jobId, address culprit) internal {
        Account storage a = accounts[culprit];
        uint256 amount = uint256(a.stake) + a.pending;
        a.stake = 0;
        a.pending = 0;
        a.unlockAt = 0;
        totalBurned += amount;
        emit Slashed(jobId, culprit, amount);
    }
}
