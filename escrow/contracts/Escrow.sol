// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title jobmesh settlement escrow
/// @notice Holds a job's price until the mesh settles it, refunds it after its
/// deadline or lets its creator abort it before any work; holds processors'
/// stakes and burns the stake of a culprit named in a settled verdict.
///
/// A job lives under a key bound to its creator (jobKey(creator, jobId)), so
/// no one can take another creator's job ID. Processors join a job before
/// they work on it; the members are the only accounts that can sign, be paid
/// or be slashed in its settlement, and the quorum is counted against them.
/// Every payment is a pull payment (credit, then `withdraw`), so the only
/// external calls are the two withdrawals, each made after its state change
/// and under a reentrancy guard.
contract Escrow {
    // ---------------------------------------------------------------- states
    uint8 internal constant STATE_NONE = 0;
    uint8 internal constant STATE_FUNDED = 1;
    uint8 internal constant STATE_SETTLED = 2;
    uint8 internal constant STATE_REFUNDED = 3;
    uint8 internal constant STATE_ABORTED = 4;

    /// Upper bound on a job's members. 255 is the largest count the member
    /// byte in the job's second slot holds; payees, culprits and signers are
    /// distinct members, so it bounds them (and settle's gas) too.
    uint256 public constant MAX_MEMBERS = 255;

    // A job fits two storage slots so createJob costs two fresh slots.
    // Slot 0: creator and price. Slot 1: while Funded, the first 15 bytes of
    // the seed commitment (the full commitment is in JobCreated); once the
    // job is closed, the block number that closed it, so a client can fetch
    // the closing event without scanning the whole chain. Then the
    // deadline, the last join's time, the creator's terms, the member count
    // and the state.
    struct Job {
        address creator;
        uint96 amount;
        uint120 commitOrBlock;
        uint40 deadline;
        uint40 lastJoin;
        uint32 quiet;
        uint8 minSigners;
        uint8 members;
        uint8 state;
    }

    // An account's stake and credit share one slot: a staked processor's
    // slot is never zero, so crediting it costs a warm nonzero write.
    struct Account {
        uint128 stake; // active stake, counted for joins, signing and selection
        uint128 credit; // pull-payment balance
        uint128 pending; // stake waiting out the cool-down, still slashable
        uint64 unlockAt; // when pending may be withdrawn
    }

    // ---------------------------------------------------------------- EIP-712
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 internal constant NAME_HASH = keccak256("jobmesh-escrow");
    bytes32 internal constant VERSION_HASH = keccak256("2");
    bytes32 public constant SETTLEMENT_TYPEHASH = keccak256(
        "Settlement(bytes32 jobKey,bytes32 seed,bytes32 resultRoot,bytes32 verifierHash,address[] payees,uint256[] amounts,address[] culprits)"
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
    mapping(bytes32 => mapping(address => bool)) internal member;
    mapping(address => Account) internal accounts;
    /// Stake burned by slashing; it stays locked in this contract forever.
    uint256 public totalBurned;
    bool internal transient locked;

    // ---------------------------------------------------------------- events
    event JobCreated(
        bytes32 indexed key,
        bytes32 indexed jobId,
        address indexed creator,
        uint256 amount,
        bytes32 seedCommitment,
        uint64 deadline,
        uint32 quiet,
        uint8 minSigners
    );
    event Joined(bytes32 indexed key, address indexed processor, uint256 members);
    event EscrowReleased(
        bytes32 indexed key,
        bytes32 resultRoot,
        bytes32 verifierHash,
        address[] payees,
        uint256[] amounts,
        uint256 refund
    );
    event Refunded(bytes32 indexed key, address indexed creator, uint256 amount);
    event JobAborted(bytes32 indexed key, address indexed creator, uint256 amount);
    event Staked(address indexed processor, uint256 amount, uint256 total);
    event UnstakeRequested(address indexed processor, uint256 amount, uint64 unlockAt);
    event StakeWithdrawn(address indexed processor, uint256 amount);
    event Slashed(bytes32 indexed key, address indexed culprit, uint256 amount);
    event Withdrawn(address indexed account, uint256 amount);

    // ---------------------------------------------------------------- errors
    error BadConfig();
    error Reentrant();
    error JobExists(bytes32 key);
    error BadAmount();
    error BadDeadline(uint256 deadline, uint256 now_);
    error BadCommitment();
    error BadMinSigners();
    error JobNotFunded(bytes32 key, uint8 state);
    error JobExpired(bytes32 key, uint256 deadline);
    error DeadlineNotReached(bytes32 key, uint256 deadline);
    error NotCreator(address caller, address creator);
    error WorkStarted(bytes32 key, uint256 members);
    error JoinClosed(bytes32 key, uint256 closedAt);
    error NotStaked(address account, uint256 stake, uint256 minStake);
    error AlreadyMember(bytes32 key, address account);
    error TooManyMembers(bytes32 key, uint256 max);
    error NotMember(bytes32 key, address account);
    error NoMembers(bytes32 key);
    error TooEarly(bytes32 key, uint256 opensAt);
    error BadSeed(bytes32 key);
    error LengthMismatch();
    error PayeesNotSorted(uint256 index);
    error SignersNotSorted(uint256 index);
    error CulpritsNotSorted(uint256 index);
    error CulpritIsPayee(address culprit);
    error OverPayment(uint256 total, uint256 escrow);
    error BadSignature(uint256 index);
    error SignerNotStaked(address signer, uint256 stake, uint256 minStake);
    error QuorumNotReached(uint256 signatures, uint256 members);
    error TooFewSigners(uint256 signatures, uint256 minSigners);
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

    /// @param minStake_ active stake an account needs to join a job and for
    /// its settlement signature to count.
    /// @param quorumNumerator_ with quorumDenominator_: the share of a job's
    /// members that must sign its settlement; at least 2/3.
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

    /// @notice The key a creator's job lives under: every function but
    /// createJob takes it. Another account's createJob with the same jobId
    /// makes another key, so a job ID cannot be squatted.
    function jobKey(address creator, bytes32 jobId) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(creator, jobId));
    }

    /// @notice Locks msg.value as the price of the caller's job `jobId`,
    /// under jobKey(msg.sender, jobId).
    /// @param seedCommitment keccak256 of the creator's secret 32-byte check seed.
    /// @param deadline unix time until which the job may be settled; after
    /// it, anyone may refund it to its creator. It must leave `quiet`
    /// seconds from now.
    /// @param quiet seconds that must pass after the last join before the
    /// job may be settled; joins close `quiet` seconds before the deadline.
    /// @param minSigners the fewest member signatures a settlement needs; at
    /// least 1.
    function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline, uint32 quiet, uint8 minSigners)
        external
        payable
        nonReentrant
    {
        bytes32 key = jobKey(msg.sender, jobId);
        if (jobs[key].state != STATE_NONE) revert JobExists(key);
        if (msg.value == 0 || msg.value > type(uint96).max) revert BadAmount();
        if (deadline <= block.timestamp + quiet || deadline > type(uint40).max) {
            revert BadDeadline(deadline, block.timestamp);
        }
        if (seedCommitment == bytes32(0)) revert BadCommitment();
        if (minSigners == 0) revert BadMinSigners();
        jobs[key] = Job({
            creator: msg.sender,
            amount: uint96(msg.value),
            commitOrBlock: uint120(uint256(seedCommitment) >> 136),
            deadline: uint40(deadline),
            lastJoin: 0,
            quiet: quiet,
            minSigners: minSigners,
            members: 0,
            state: STATE_FUNDED
        });
        emit JobCreated(key, jobId, msg.sender, msg.value, seedCommitment, deadline, quiet, minSigners);
    }

    /// @notice Enrolls the caller as a member of job `key`: a processor
    /// joins before it works on the job. Each join restarts the quiet
    /// period before the job may be settled.
    function join(bytes32 key) external nonReentrant {
        Job storage job = jobs[key];
        uint8 state = job.state;
        if (state != STATE_FUNDED) revert JobNotFunded(key, state);
        uint256 closesAt = uint256(job.deadline) - job.quiet;
        if (block.timestamp > closesAt) revert JoinClosed(key, closesAt);
        uint256 s = accounts[msg.sender].stake;
        if (s < minStake) revert NotStaked(msg.sender, s, minStake);
        mapping(address => bool) storage m = member[key];
        if (m[msg.sender]) revert AlreadyMember(key, msg.sender);
        uint256 members = job.members;
        if (members >= MAX_MEMBERS) revert TooManyMembers(key, MAX_MEMBERS);
        m[msg.sender] = true;
        ++members;
        job.members = uint8(members);
        job.lastJoin = uint40(block.timestamp);
        emit Joined(key, msg.sender, members);
    }

    /// @notice Releases the escrow of job `key` on a verdict signed by a
    /// quorum of its members, and burns the stake of every culprit it names.
    /// @param seed the creator's revealed check seed, or zero when it did not
    /// reveal it in time.
    /// @param payees strictly ascending members.
    /// @param amounts amounts[i] is credited to payees[i]; the rest of the
    /// escrow is credited to the creator.
    /// @param culprits strictly ascending members, none of them a payee.
    /// @param signers strictly ascending members with active stake; each
    /// signs the same settlement.
    /// @param signatures signatures[i] is signers[i]'s 65-byte EIP-712
    /// signature over the settlement.
    function settle(
        bytes32 key,
        bytes32 seed,
        bytes32 resultRoot,
        bytes32 verifierHash,
        address[] calldata payees,
        uint256[] calldata amounts,
        address[] calldata culprits,
        address[] calldata signers,
        bytes[] calldata signatures
    ) external nonReentrant {
        Job storage job = jobs[key];
        Job memory j = job;
        _checkSettleable(key, j, seed);
        uint256 n = payees.length;
        if (n == 0 || amounts.length != n || signatures.length != signers.length) revert LengthMismatch();

        mapping(address => bool) storage m = member[key];
        _checkSigners(key, j, m, settlementDigest(key, seed, resultRoot, verifierHash, payees, amounts, culprits), signers, signatures);
        uint256 total;
        address prev;
        for (uint256 i; i < n; ++i) {
            address p = payees[i];
            if (p <= prev) revert PayeesNotSorted(i);
            prev = p;
            if (!m[p]) revert NotMember(key, p);
            total += amounts[i];
        }
        if (total > j.amount) revert OverPayment(total, j.amount);
        _checkCulprits(key, m, payees, culprits);

        // Effects. The job closes before anything is credited.
        job.state = STATE_SETTLED;
        job.commitOrBlock = uint120(block.number);
        for (uint256 i; i < n; ++i) {
            accounts[payees[i]].credit += uint128(amounts[i]);
        }
        uint256 rest = j.amount - total;
        if (rest != 0) accounts[j.creator].credit += uint128(rest);
        for (uint256 i; i < culprits.length; ++i) {
            _slash(key, culprits[i]);
        }
        emit EscrowReleased(key, resultRoot, verifierHash, payees, amounts, rest);
    }

    /// @notice After the deadline, credits the whole escrow back to the
    /// creator. Anyone may call it; the money only goes to the creator.
    function refund(bytes32 key) external nonReentrant {
        Job storage job = jobs[key];
        Job memory j = job;
        if (j.state != STATE_FUNDED) revert JobNotFunded(key, j.state);
        if (block.timestamp <= j.deadline) revert DeadlineNotReached(key, j.deadline);
        job.state = STATE_REFUNDED;
        job.commitOrBlock = uint120(block.number);
        accounts[j.creator].credit += uint128(j.amount);
        emit Refunded(key, j.creator, j.amount);
    }

    /// @notice Credits the escrow back to the creator of a job no processor
    /// has joined (the mesh evicted it, or the creator withdrew it before
    /// any work). Once a processor has joined, the job ends by settle, or by
    /// refund after its deadline.
    function abort(bytes32 key) external nonReentrant {
        Job storage job = jobs[key];
        Job memory j = job;
        if (j.state != STATE_FUNDED) revert JobNotFunded(key, j.state);
        if (msg.sender != j.creator) revert NotCreator(msg.sender, j.creator);
        if (j.members != 0) revert WorkStarted(key, j.members);
        job.state = STATE_ABORTED;
        job.commitOrBlock = uint120(block.number);
        accounts[j.creator].credit += uint128(j.amount);
        emit JobAborted(key, j.creator, j.amount);
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
    /// counting for joins and signatures at once but stays slashable until
    /// withdrawn. A new request restarts the cool-down for everything
    /// pending.
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

    /// @notice A job's record. `closedAtBlock` is 0 while the job is Funded;
    /// `lastJoin` is 0 until a processor joins.
    function getJob(bytes32 key)
        external
        view
        returns (
            address creator,
            uint256 amount,
            uint64 deadline,
            uint8 state,
            uint256 closedAtBlock,
            uint8 members,
            uint64 lastJoin,
            uint32 quiet,
            uint8 minSigners
        )
    {
        Job memory j = jobs[key];
        creator = j.creator;
        amount = j.amount;
        deadline = j.deadline;
        state = j.state;
        if (j.state > STATE_FUNDED) closedAtBlock = j.commitOrBlock;
        members = j.members;
        lastJoin = j.lastJoin;
        quiet = j.quiet;
        minSigners = j.minSigners;
    }

    function isMember(bytes32 key, address account) external view returns (bool) {
        return member[key][account];
    }

    /// @notice A processor's stake: active (counted for joins, signing and
    /// by the dispatcher), pending (cooling down) and when pending unlocks.
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

    /// @notice The EIP-712 digest a member signs for a settlement.
    function settlementDigest(
        bytes32 key,
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
                key,
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

    // The job is open for settlement: funded, before its deadline, its quiet
    // period since the last join over, with members, and the seed is its own
    // (the creator's revealed check seed) or zero (the creator did not
    // reveal in time, and the members checked the work without it: the
    // escrow settles all the same, so silence earns no refund).
    function _checkSettleable(bytes32 key, Job memory j, bytes32 seed) internal view {
        if (j.state != STATE_FUNDED) revert JobNotFunded(key, j.state);
        if (block.timestamp > j.deadline) revert JobExpired(key, j.deadline);
        uint256 opensAt = uint256(j.lastJoin) + j.quiet;
        if (block.timestamp < opensAt) revert TooEarly(key, opensAt);
        if (j.members == 0) revert NoMembers(key);
        if (seed != bytes32(0) && uint120(uint256(keccak256(abi.encodePacked(seed))) >> 136) != j.commitOrBlock) {
            revert BadSeed(key);
        }
    }

    // Every signer is a distinct member with active stake whose signature
    // is valid, and they are a quorum of the members and at least the
    // creator's minimum.
    function _checkSigners(
        bytes32 key,
        Job memory j,
        mapping(address => bool) storage m,
        bytes32 digest,
        address[] calldata signers,
        bytes[] calldata signatures
    ) internal view {
        uint256 k = signers.length;
        uint256 min = minStake;
        address prev;
        for (uint256 i; i < k; ++i) {
            address s = signers[i];
            if (s <= prev) revert SignersNotSorted(i);
            prev = s;
            if (!m[s]) revert NotMember(key, s);
            if (_recover(digest, signatures[i]) != s) revert BadSignature(i);
            uint256 st = accounts[s].stake;
            if (st < min) revert SignerNotStaked(s, st, min);
        }
        if (k * quorumDenominator < uint256(j.members) * quorumNumerator) revert QuorumNotReached(k, j.members);
        if (k < j.minSigners) revert TooFewSigners(k, j.minSigners);
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
    // and that none of them is paid; each must be a member.
    function _checkCulprits(
        bytes32 key,
        mapping(address => bool) storage m,
        address[] calldata payees,
        address[] calldata culprits
    ) internal view {
        uint256 j;
        address prev;
        for (uint256 i; i < culprits.length; ++i) {
            address c = culprits[i];
            if (c <= prev) revert CulpritsNotSorted(i);
            prev = c;
            if (!m[c]) revert NotMember(key, c);
            while (j < payees.length && payees[j] < c) ++j;
            if (j < payees.length && payees[j] == c) revert CulpritIsPayee(c);
        }
    }

    // Burns the culprit's whole stake, active and cooling down alike: the
    // signers gain nothing from naming a culprit, so no one profits from a
    // false accusation.
    function _slash(bytes32 key, address culprit) internal {
        Account storage a = accounts[culprit];
        uint256 amount = uint256(a.stake) + a.pending;
        a.stake = 0;
        a.pending = 0;
        a.unlockAt = 0;
        totalBurned += amount;
        emit Slashed(key, culprit, amount);
    }
}
