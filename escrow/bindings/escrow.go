// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package bindings

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// EscrowMetaData contains all meta data concerning the Escrow contract.
var EscrowMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"minStake_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"quorumNumerator_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"quorumDenominator_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"unstakeCooldown_\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"AlreadyMember\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadCommitment\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadConfig\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"now_\",\"type\":\"uint256\"}],\"name\":\"BadDeadline\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadMinSigners\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"BadSeed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"BadSignature\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"culprit\",\"type\":\"address\"}],\"name\":\"CulpritIsPayee\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"CulpritsNotSorted\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"DeadlineNotReached\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"requested\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"stake\",\"type\":\"uint256\"}],\"name\":\"InsufficientStake\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"JobExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"JobExpired\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"state\",\"type\":\"uint8\"}],\"name\":\"JobNotFunded\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"closedAt\",\"type\":\"uint256\"}],\"name\":\"JoinClosed\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"LengthMismatch\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"NoMembers\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"}],\"name\":\"NotCreator\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"NotMember\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"stake\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"minStake\",\"type\":\"uint256\"}],\"name\":\"NotStaked\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NothingToWithdraw\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"escrow\",\"type\":\"uint256\"}],\"name\":\"OverPayment\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"PayeesNotSorted\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"signatures\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"members\",\"type\":\"uint256\"}],\"name\":\"QuorumNotReached\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"Reentrant\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"signer\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"stake\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"minStake\",\"type\":\"uint256\"}],\"name\":\"SignerNotStaked\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"SignersNotSorted\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"name\":\"StakeLocked\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"opensAt\",\"type\":\"uint256\"}],\"name\":\"TooEarly\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"signatures\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"minSigners\",\"type\":\"uint256\"}],\"name\":\"TooFewSigners\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"max\",\"type\":\"uint256\"}],\"name\":\"TooManyMembers\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"TransferFailed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"members\",\"type\":\"uint256\"}],\"name\":\"WorkStarted\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"indexed\":false,\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"refund\",\"type\":\"uint256\"}],\"name\":\"EscrowReleased\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"JobAborted\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"seedCommitment\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint32\",\"name\":\"quiet\",\"type\":\"uint32\"},{\"indexed\":false,\"internalType\":\"uint8\",\"name\":\"minSigners\",\"type\":\"uint8\"}],\"name\":\"JobCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"members\",\"type\":\"uint256\"}],\"name\":\"Joined\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"culprit\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Slashed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"StakeWithdrawn\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"}],\"name\":\"Staked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"name\":\"UnstakeRequested\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Withdrawn\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"MAX_MEMBERS\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"SETTLEMENT_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"abort\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seedCommitment\",\"type\":\"bytes32\"},{\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"},{\"internalType\":\"uint32\",\"name\":\"quiet\",\"type\":\"uint32\"},{\"internalType\":\"uint8\",\"name\":\"minSigners\",\"type\":\"uint8\"}],\"name\":\"createJob\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"creditOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"domainSeparator\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"getJob\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"},{\"internalType\":\"uint8\",\"name\":\"state\",\"type\":\"uint8\"},{\"internalType\":\"uint256\",\"name\":\"closedAtBlock\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"members\",\"type\":\"uint8\"},{\"internalType\":\"uint64\",\"name\":\"lastJoin\",\"type\":\"uint64\"},{\"internalType\":\"uint32\",\"name\":\"quiet\",\"type\":\"uint32\"},{\"internalType\":\"uint8\",\"name\":\"minSigners\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"isMember\",\"outputs\":[{\"internalType\":\"bool\",\"name\":\"\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"jobKey\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"pure\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"join\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"minStake\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"quorumDenominator\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"quorumNumerator\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"requestUnstake\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seed\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"internalType\":\"address[]\",\"name\":\"culprits\",\"type\":\"address[]\"},{\"internalType\":\"address[]\",\"name\":\"signers\",\"type\":\"address[]\"},{\"internalType\":\"bytes[]\",\"name\":\"signatures\",\"type\":\"bytes[]\"}],\"name\":\"settle\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"key\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seed\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"internalType\":\"address[]\",\"name\":\"culprits\",\"type\":\"address[]\"}],\"name\":\"settlementDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"stake\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"}],\"name\":\"stakeOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"active\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"pending\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalBurned\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"unstakeCooldown\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdrawStake\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "Escrow",
	Bin: "0x61014080604052346101e357608081612aed803803809161002082856101e7565b8339810103126101e35780519060208101516060604083015192015192801580156101db575b80156101d2575b8015610192575b8015610182575b6101735760805260a05260c05260e052466101005260405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527f7db6e4bfdda2c336fbd01808c3bd3350ea4873abff3ea93dfcb9f15b02aab08160408201527fad7c5bef027816a800da1736444fb58a807ef4c9603b7848673f7e3a68eb14a560608201524660808201523060a082015260a0815261010260c0826101e7565b519020610120526040516128ce908161021f82396080518181816103dd015281816111030152611ded015260a05181818161046e015261135b015260c05181818161043c0152611395015260e0518181816113cf0152611f1301526101005181612723015261012051816127dc0152f35b6301f30c8760e21b5f5260045ffd5b506001600160401b03831161005b565b5060038202828104600314831517156101be578360011b90848204600214851517156101be5710610054565b634e487b7160e01b5f52601160045260245ffd5b5082821161004d565b508215610046565b5f80fd5b601f909101601f19168101906001600160401b0382119082101761020a57604052565b634e487b7160e01b5f52604160045260245ffdfe60806040526004361015610011575f80fd5b5f3560e01c806309d6ce0e146120b857806310ad56b3146120495780632309572114611e10578063375b3c0a14611dd65780633a4b66f114611cd05780633ccfd60b14611c425780634262336014611b535780634f47972c1461168b5780636461d441146116645780637249fbb6146114c957806375807250146114815780637e57bb5d146113f25780637eefd5ae146113b857806397c3d3341461137e578063a7713a7014611344578063ad677d0b14611077578063b1fb79c01461103d578063bed9d86114610ee1578063d89135cd14610ec4578063e99aac1714610246578063ea0e35b11461022b578063f698da25146102095763f729cf0d14610116575f80fd5b34610205576020600319360112610205576101205f6004355f525f60205261014060405f20612358565b9073ffffffffffffffffffffffffffffffffffffffff825116916bffffffffffffffffffffffff6020820151169164ffffffffff6060830151169060ff6101008401511690600182116101e9575b60ff60e0850151169164ffffffffff6080860151169360ff60c063ffffffff60a0890151169701511696604051988952602089015260408801526060870152608086015260a085015260c084015260e0830152610100820152f35b506effffffffffffffffffffffffffffff60408401511661018e565b5f80fd5b34610205575f600319360112610205576020610223612721565b604051908152f35b34610205575f60031936011261020557602060405160ff8152f35b34610205576101206003193601126102055760843567ffffffffffffffff8111610205576102789036906004016122c9565b9060a43567ffffffffffffffff8111610205576102999036906004016122c9565b60c49391933567ffffffffffffffff8111610205576102bc9036906004016122c9565b919060e43567ffffffffffffffff8111610205576102de9036906004016122c9565b6101049491943567ffffffffffffffff8111610205576103029036906004016122c9565b95909160ff5f5c16610e9c57600160ff195f5c16175f5d6004355f525f60205260405f209161033083612358565b9760ff6101008a01511660018103610e6b575064ffffffffff60608a015116804211610e3a575061037764ffffffffff60808b01511663ffffffff60a08c01511690612429565b804210610e09575060ff60e08a01511615610ddb57602435151580610d9b575b610d6d5789158015610d63575b8015610d59575b610d3157908a946103db87898f8c908f6004355f52600160205260405f209b606435604435602435600435612523565b7f0000000000000000000000000000000000000000000000000000000000000000935f925f917fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe182360301925b888110610ba45750505050505050506104617f0000000000000000000000000000000000000000000000000000000000000000826127fe565b61049360ff60e08a0151167f0000000000000000000000000000000000000000000000000000000000000000906127fe565b11610b6d5760ff60c08801511690818110610b3f5750505f915f5f905b898b818410610a7857505050506bffffffffffffffffffffffff602088015116808411610a4957509798975f90819081905b86841061085d575050505060010180547effffffffffffffffffffffffffffffff00000000000000000000000000000016436effffffffffffffffffffffffffffff16177f02000000000000000000000000000000000000000000000000000000000000001790555f5b8681106107ee5750610570906bffffffffffffffffffffffff6020870151166126b6565b9384610762575b505f5b81811061066357505050604051928060a085016044358652606435602087015260a060408701525260c0840195905f5b81811061062e5750505082850360608401528085527f07ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8111610205577f82ce5d2543ea05265e7144ae2b7f997ecf16d435da92112c10237f1262e33b1a93602092849260051b80928589013760808301526004359501030190a260ff195f5c165f5d005b90919660208060019273ffffffffffffffffffffffffffffffffffffffff6106558c6122a8565b1681520198019291016105aa565b8073ffffffffffffffffffffffffffffffffffffffff61068e61068960019486886126f0565b612700565b16805f52600260205260405f206fffffffffffffffffffffffffffffffff8154166106d0858301916fffffffffffffffffffffffffffffffff83541690612429565b82547fffffffffffffffffffffffffffffffff000000000000000000000000000000001690925580547fffffffffffffffff00000000000000000000000000000000000000000000000016905560035461072b908290612429565b6003556040519081527f9de580357d3604ebca6b3a7ea5fec250912003c037421eb01869fcf2b15d1307602060043592a30161057a565b73ffffffffffffffffffffffffffffffffffffffff9051165f5260026020526107e860405f206107a86fffffffffffffffffffffffffffffffff8716825460801c6123f7565b6fffffffffffffffffffffffffffffffff7fffffffffffffffffffffffffffffffff0000000000000000000000000000000083549260801b169116179055565b87610577565b806108548a73ffffffffffffffffffffffffffffffffffffffff61083a610689858e9f9e6fffffffffffffffffffffffffffffffff8f9160019a8f610832926126f0565b3516956126f0565b165f5260026020526107a860405f2091825460801c6123f7565b0197969761054c565b73ffffffffffffffffffffffffffffffffffffffff61088c610689869f9e9a97949b98959d9c999687896126f0565b9b1673ffffffffffffffffffffffffffffffffffffffff8c161115610a1d578a73ffffffffffffffffffffffffffffffffffffffff8c165f528160205260ff60405f205416156109d557985b8a81108d828d8f846109a1575b50505050156108fc576108f7906126c3565b6108d8565b9295989194979c909396999a8b8d85828110928361096e575b50505061092c5750600101929b9a9b9190916104e2565b73ffffffffffffffffffffffffffffffffffffffff907f1e198233000000000000000000000000000000000000000000000000000000005f521660045260245ffd5b73ffffffffffffffffffffffffffffffffffffffff9293506109979161068991848716956126f0565b16148d858e610915565b73ffffffffffffffffffffffffffffffffffffffff9394509161068991846109ca9416956126f0565b16108d828d8f6108e5565b73ffffffffffffffffffffffffffffffffffffffff8c7f0a6c3de1000000000000000000000000000000000000000000000000000000005f526004356004521660245260445ffd5b8c7f30b543ad000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b837f666f7b84000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b83610a8a9261068992989495986126f0565b73ffffffffffffffffffffffffffffffffffffffff8082169316831115610b135791805f528360205260ff60405f20541615610ae25750610ada600191610ad3878f8c906126f0565b3590612429565b9401906104b0565b7f0a6c3de1000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b857f85f69001000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7fcd2ce46f000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b60ff60e088015116907f6a215984000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b610bb2610689828b8a6126f0565b73ffffffffffffffffffffffffffffffffffffffff8082169716871115610d055795805f528b60205260ff60405f20541615610ae25782821015610cd8578160051b8401358581121561020557840180359067ffffffffffffffff82116102055760200190803603821361020557610c4173ffffffffffffffffffffffffffffffffffffffff9184938a612811565b1603610cac57805f5260026020526fffffffffffffffffffffffffffffffff60405f20541690898210610c78575050600101610428565b8992507f4ae8d794000000000000000000000000000000000000000000000000000000005f5260045260245260445260645ffd5b507fa1c97319000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7f4e487b71000000000000000000000000000000000000000000000000000000005f52603260045260245ffd5b507f151f10f8000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7fff633a38000000000000000000000000000000000000000000000000000000005f5260045ffd5b50828114156103ab565b50898814156103a4565b7ff74e6104000000000000000000000000000000000000000000000000000000005f5260043560045260245ffd5b506040516020810190602435825260208152610db8604082612317565b51902060881c6effffffffffffffffffffffffffffff60408b0151161415610397565b7f390cc79d000000000000000000000000000000000000000000000000000000005f5260043560045260245ffd5b7fd47800eb000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b7ff452a844000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b7f769050df000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b7fed3ba6a6000000000000000000000000000000000000000000000000000000005f5260045ffd5b34610205575f600319360112610205576020600354604051908152f35b34610205575f6003193601126102055760ff5f5c16610e9c57600160ff195f5c16175f5d335f526002602052600160405f20018054906fffffffffffffffffffffffffffffffff82169182156110155767ffffffffffffffff9060801c16804210610fea575080547fffffffffffffffff00000000000000000000000000000000000000000000000016905560405181815233907f8108595eb6bad3acefa9da467d90cc2217686d5c5ac85460f8b7849c840645fc90602090a25f80808084335af1610fab612436565b5015610fbb5760ff195f5c165f5d005b7f1c43b976000000000000000000000000000000000000000000000000000000005f523360045260245260445ffd5b7f68a2053c000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7fd0d04f60000000000000000000000000000000000000000000000000000000005f5260045ffd5b34610205575f6003193601126102055760206040517fd14989ce82b9e7e901cdf5dfee0f77371c549e98ea95d6d3c14d5dad6f7768318152f35b346102055760206003193601126102055760043560ff5f5c16610e9c57600160ff195f5c16175f5d805f525f602052600160405f20019081548060f81c6001810361131557506110da63ffffffff8260c81c1664ffffffffff8360781c166126b6565b8042116112e65750335f5260026020526fffffffffffffffffffffffffffffffff60405f2054167f0000000000000000000000000000000000000000000000000000000000000000908181106112b4575050815f52600160205260405f209073ffffffffffffffffffffffffffffffffffffffff33165f528160205260ff60405f2054166112845760ff9060f01c169060ff8210156112535761121d916111ab9173ffffffffffffffffffffffffffffffffffffffff33165f5260205260405f20600160ff198254161790556126c3565b835478ffffffffff00000000000000000000000000000000000000004260a01b167fff00ffffffffff0000000000ffffffffffffffffffffffffffffffffffffffff9091167eff00000000000000000000000000000000000000000000000000000000000060f084901b161717909355565b6040519182527f91a4dbdcbc6d322357bda498e04d2259453ee2b85812554356e6ae0b5935f3bd60203393a360ff195f5c165f5d005b827f9ad181bc000000000000000000000000000000000000000000000000000000005f5260045260ff60245260445ffd5b827f762a112f000000000000000000000000000000000000000000000000000000005f526004523360245260445ffd5b7fa112319f000000000000000000000000000000000000000000000000000000005f523360045260245260445260645ffd5b827f6fd42eb0000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b827f769050df000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b34610205575f6003193601126102055760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b34610205575f6003193601126102055760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b34610205575f6003193601126102055760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346102055760e06003193601126102055760843567ffffffffffffffff8111610205576114239036906004016122c9565b60a43567ffffffffffffffff8111610205576114439036906004016122c9565b91909260c4359267ffffffffffffffff84116102055760209461146d6102239536906004016122c9565b949093606435604435602435600435612523565b346102055760206003193601126102055773ffffffffffffffffffffffffffffffffffffffff6114af612285565b165f526002602052602060405f205460801c604051908152f35b346102055760206003193601126102055760043560ff5f5c16610e9c57600160ff195f5c16175f5d805f525f60205260405f209061150682612358565b9160ff6101008401511660018103611315575064ffffffffff6060840151168042111561163557506001017f03000000000000000000000000000000000000000000000000000000000000007effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8254161781556effffffffffffffffffffffffffffff804316167fffffffffffffffffffffffffffffffffff0000000000000000000000000000008254161790557ff552ca82e113ac3c539c3d617f29fcd19c172a0c75dad017555c9e109f7fe18360206bffffffffffffffffffffffff73ffffffffffffffffffffffffffffffffffffffff8286019561161f83885116838351165f52600286526107a860405f2091825460801c6123f7565b5116945116604051908152a360ff195f5c165f5d005b827ff1496019000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b34610205576040600319360112610205576020610223611682612285565b60243590612493565b60a06003193601126102055760243560043560443567ffffffffffffffff81168082036102055760643563ffffffff8116809103610205576084359160ff83168093036102055760ff5f5c16610e9c57600160ff195f5c16175f5d6116f08533612493565b93845f525f602052600160405f20015460f81c611b275734158015611b12575b611aea5761171e8342612429565b8211801590611adc575b611aac578615611a84578315611a5c57604051611744816122fa565b3381526020810190346bffffffffffffffffffffffff16825260408101928960881c8452606082019064ffffffffff168152608082015f815260a083019087825260c084019289845260e08501945f8652610100810196600188528c5f525f60205260405f20915173ffffffffffffffffffffffffffffffffffffffff16905160a01b7fffffffffffffffffffffffff00000000000000000000000000000000000000001617815560010196516effffffffffffffffffffffffffffff166effffffffffffffffffffffffffffff1687547fffffffffffffffffffffffffffffffffff000000000000000000000000000000161787555186549060781b73ffffffffff00000000000000000000000000000016907fffffffffffffffffffffffff0000000000ffffffffffffffffffffffffffffff161786555164ffffffffff166118d49086907fffffffffffffff0000000000ffffffffffffffffffffffffffffffffffffffff78ffffffffff000000000000000000000000000000000000000083549260a01b169116179055565b51908454905160e81b7dff0000000000000000000000000000000000000000000000000000000000169160c81b7cffffffff0000000000000000000000000000000000000000000000000016907fffff0000000000ffffffffffffffffffffffffffffffffffffffffffffffffff16171783555160ff166119a09083907fff00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7eff00000000000000000000000000000000000000000000000000000000000083549260f01b169116179055565b5181549060f81b7fff00000000000000000000000000000000000000000000000000000000000000167fff0000000000000000000000000000000000000000000000000000000000000016907effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff16179055604051953487526020870152604086015260608501526080840152339260a07fd41b1c22589c758cf4aee7011a5c28b964fc0c9780607564d0a92a2add6d880291a45f5c60ff19165f5d005b7f08194882000000000000000000000000000000000000000000000000000000005f5260045ffd5b7fc38b437f000000000000000000000000000000000000000000000000000000005f5260045ffd5b507f2cd0b0c2000000000000000000000000000000000000000000000000000000005f526004524260245260445ffd5b5064ffffffffff8211611728565b7f749b5939000000000000000000000000000000000000000000000000000000005f5260045ffd5b506bffffffffffffffffffffffff3411611710565b847f9e2b4bfd000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b346102055760206003193601126102055773ffffffffffffffffffffffffffffffffffffffff611b81612285565b165f52600260205260405f20604051906080820182811067ffffffffffffffff821117611c1557606092839160405260018354936fffffffffffffffffffffffffffffffff85169485845260801c602084015201549067ffffffffffffffff6fffffffffffffffffffffffffffffffff83169283604084015260801c16928391015260405192835260208301526040820152f35b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b34610205575f6003193601126102055760ff5f5c16610e9c57600160ff195f5c16175f5d335f52600260205260405f20805460801c908115611015576fffffffffffffffffffffffffffffffff81541690556040518181527f7084f5476618d8e60b11ef0d7d3f06914655adb8793e28ff7f018d4c76d505d560203392a25f80808084335af1610fab612436565b5f6003193601126102055760ff5f5c16610e9c57600160ff195f5c16175f5d34158015611dc1575b611aea57335f52600260205260405f20611d386fffffffffffffffffffffffffffffffff8254166fffffffffffffffffffffffffffffffff3416906123f7565b906fffffffffffffffffffffffffffffffff82167fffffffffffffffffffffffffffffffff000000000000000000000000000000008254161790556fffffffffffffffffffffffffffffffff604051913483521660208201527f1449c6dd7851abc30abf37f57715f492010519147cc2652fbc38202c18a6ee9060403392a260ff195f5c165f5d005b506bffffffffffffffffffffffff3411611cf8565b34610205575f6003193601126102055760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346102055760206003193601126102055760043560ff5f5c16610e9c57600160ff195f5c16175f5d335f52600260205260405f208115801561202d575b611fea576fffffffffffffffffffffffffffffffff8216806fffffffffffffffffffffffffffffffff835416036fffffffffffffffffffffffffffffffff8111611fbd57611ee6600167ffffffffffffffff946fffffffffffffffffffffffffffffffff8094167fffffffffffffffffffffffffffffffff000000000000000000000000000000008254161781550192828454166123f7565b167fffffffffffffffffffffffffffffffff00000000000000000000000000000000825416178155611f387f000000000000000000000000000000000000000000000000000000000000000042612429565b9080547fffffffffffffffff0000000000000000ffffffffffffffffffffffffffffffff77ffffffffffffffff00000000000000000000000000000000808560801b161691161790556040519283521660208201527f21020437c0e4b58b34bd7ac1f1cef55e7820d1bcd93824ceb273cad96eea704c60403392a260ff195f5c165f5d005b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b6fffffffffffffffffffffffffffffffff905416907f45be0a26000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b506fffffffffffffffffffffffffffffffff8154168211611e4d565b346102055760406003193601126102055760243573ffffffffffffffffffffffffffffffffffffffff81168103610205576004355f52600160205273ffffffffffffffffffffffffffffffffffffffff60405f2091165f52602052602060ff60405f2054166040519015158152f35b346102055760206003193601126102055760043560ff5f5c16610e9c57600160ff195f5c16175f5d805f525f60205260405f20906120f582612358565b9160ff6101008401511660018103611315575073ffffffffffffffffffffffffffffffffffffffff835116803303612256575060ff60e0840151168061222757506001017f04000000000000000000000000000000000000000000000000000000000000007effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8254161781556effffffffffffffffffffffffffffff804316167fffffffffffffffffffffffffffffffffff0000000000000000000000000000008254161790557f9bdb223fe8dacdd3c3622447e65edc253d846373ed2dcbe1f11745dc04187df160206bffffffffffffffffffffffff73ffffffffffffffffffffffffffffffffffffffff8286019561161f83885116838351165f52600286526107a860405f2091825460801c6123f7565b827fa77c5716000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b7fffb87b72000000000000000000000000000000000000000000000000000000005f523360045260245260445ffd5b6004359073ffffffffffffffffffffffffffffffffffffffff8216820361020557565b359073ffffffffffffffffffffffffffffffffffffffff8216820361020557565b9181601f840112156102055782359167ffffffffffffffff8311610205576020808501948460051b01011161020557565b610120810190811067ffffffffffffffff821117611c1557604052565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff821117611c1557604052565b90604051612365816122fa565b61010060018294805473ffffffffffffffffffffffffffffffffffffffff8116855260a01c602085015201546effffffffffffffffffffffffffffff8116604084015264ffffffffff8160781c16606084015264ffffffffff8160a01c16608084015263ffffffff8160c81c1660a084015260ff8160e81c1660c084015260ff8160f01c1660e084015260f81c910152565b906fffffffffffffffffffffffffffffffff809116911601906fffffffffffffffffffffffffffffffff8211611fbd57565b91908201809211611fbd57565b3d1561248e573d9067ffffffffffffffff8211611c15576040519161248360207fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f8401160184612317565b82523d5f602084013e565b606090565b90604051907fffffffffffffffffffffffffffffffffffffffff000000000000000000000000602083019360601b1683526034820152603481526124d8605482612317565b51902090565b905f5b8181106124ee5750505090565b90919260208060019273ffffffffffffffffffffffffffffffffffffffff612515886122a8565b1681520194019291016124e1565b989293612573612547919997969299989398604051928391602083019586916124de565b037fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe08101835282612317565b5190209360405160208101907f07ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8411610205576125ea602082612600956125479760051b80918737810103017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe08101835282612317565b51902095604051928391602083019586916124de565b519020936040519560208701977fd14989ce82b9e7e901cdf5dfee0f77371c549e98ea95d6d3c14d5dad6f776831895260408801526060870152608086015260a085015260c084015260e0830152610100820152610100815261266561012082612317565b519020612670612721565b906040519060208201927f1901000000000000000000000000000000000000000000000000000000000000845260228301526042820152604281526124d8606282612317565b91908203918211611fbd57565b7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8114611fbd5760010190565b9190811015610cd85760051b0190565b3573ffffffffffffffffffffffffffffffffffffffff811681036102055790565b7f000000000000000000000000000000000000000000000000000000000000000046146127da5760405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527f7db6e4bfdda2c336fbd01808c3bd3350ea4873abff3ea93dfcb9f15b02aab08160408201527fad7c5bef027816a800da1736444fb58a807ef4c9603b7848673f7e3a68eb14a560608201524660808201523060a082015260a081526124d860c082612317565b7f000000000000000000000000000000000000000000000000000000000000000090565b81810292918115918404141715611fbd57565b604183036128c7578260201161020557813591836040116102055760208101359360401015610cd8576040013560f81c907f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0841180156128b0575b6128a8576020935f93608093604051938452868401526040830152606082015282805260015afa1561289d575f5190565b6040513d5f823e3d90fd5b505050505f90565b50601b821415801561286c5750601c82141561286c565b5050505f9056",
}

// Escrow is an auto generated Go binding around an Ethereum contract.
type Escrow struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *Escrow) GetABI() abi.ABI {
	return c.abi
}

// NewEscrow creates a new instance of Escrow.
func NewEscrow() *Escrow {
	parsed, err := EscrowMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &Escrow{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *Escrow) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(uint256 minStake_, uint256 quorumNumerator_, uint256 quorumDenominator_, uint256 unstakeCooldown_) returns()
func (escrow *Escrow) PackConstructor(minStake_ *big.Int, quorumNumerator_ *big.Int, quorumDenominator_ *big.Int, unstakeCooldown_ *big.Int) []byte {
	enc, err := escrow.abi.Pack("", minStake_, quorumNumerator_, quorumDenominator_, unstakeCooldown_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackMAXMEMBERS is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xea0e35b1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_MEMBERS() view returns(uint256)
func (escrow *Escrow) PackMAXMEMBERS() []byte {
	enc, err := escrow.abi.Pack("MAX_MEMBERS")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXMEMBERS is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xea0e35b1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_MEMBERS() view returns(uint256)
func (escrow *Escrow) TryPackMAXMEMBERS() ([]byte, error) {
	return escrow.abi.Pack("MAX_MEMBERS")
}

// UnpackMAXMEMBERS is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xea0e35b1.
//
// Solidity: function MAX_MEMBERS() view returns(uint256)
func (escrow *Escrow) UnpackMAXMEMBERS(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("MAX_MEMBERS", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackSETTLEMENTTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb1fb79c0.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function SETTLEMENT_TYPEHASH() view returns(bytes32)
func (escrow *Escrow) PackSETTLEMENTTYPEHASH() []byte {
	enc, err := escrow.abi.Pack("SETTLEMENT_TYPEHASH")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSETTLEMENTTYPEHASH is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb1fb79c0.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function SETTLEMENT_TYPEHASH() view returns(bytes32)
func (escrow *Escrow) TryPackSETTLEMENTTYPEHASH() ([]byte, error) {
	return escrow.abi.Pack("SETTLEMENT_TYPEHASH")
}

// UnpackSETTLEMENTTYPEHASH is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb1fb79c0.
//
// Solidity: function SETTLEMENT_TYPEHASH() view returns(bytes32)
func (escrow *Escrow) UnpackSETTLEMENTTYPEHASH(data []byte) ([32]byte, error) {
	out, err := escrow.abi.Unpack("SETTLEMENT_TYPEHASH", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackAbort is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x09d6ce0e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function abort(bytes32 key) returns()
func (escrow *Escrow) PackAbort(key [32]byte) []byte {
	enc, err := escrow.abi.Pack("abort", key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAbort is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x09d6ce0e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function abort(bytes32 key) returns()
func (escrow *Escrow) TryPackAbort(key [32]byte) ([]byte, error) {
	return escrow.abi.Pack("abort", key)
}

// PackCreateJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4f47972c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline, uint32 quiet, uint8 minSigners) payable returns()
func (escrow *Escrow) PackCreateJob(jobId [32]byte, seedCommitment [32]byte, deadline uint64, quiet uint32, minSigners uint8) []byte {
	enc, err := escrow.abi.Pack("createJob", jobId, seedCommitment, deadline, quiet, minSigners)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCreateJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4f47972c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline, uint32 quiet, uint8 minSigners) payable returns()
func (escrow *Escrow) TryPackCreateJob(jobId [32]byte, seedCommitment [32]byte, deadline uint64, quiet uint32, minSigners uint8) ([]byte, error) {
	return escrow.abi.Pack("createJob", jobId, seedCommitment, deadline, quiet, minSigners)
}

// PackCreditOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x75807250.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function creditOf(address account) view returns(uint256)
func (escrow *Escrow) PackCreditOf(account common.Address) []byte {
	enc, err := escrow.abi.Pack("creditOf", account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCreditOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x75807250.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function creditOf(address account) view returns(uint256)
func (escrow *Escrow) TryPackCreditOf(account common.Address) ([]byte, error) {
	return escrow.abi.Pack("creditOf", account)
}

// UnpackCreditOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x75807250.
//
// Solidity: function creditOf(address account) view returns(uint256)
func (escrow *Escrow) UnpackCreditOf(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("creditOf", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackDomainSeparator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf698da25.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (escrow *Escrow) PackDomainSeparator() []byte {
	enc, err := escrow.abi.Pack("domainSeparator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDomainSeparator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf698da25.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (escrow *Escrow) TryPackDomainSeparator() ([]byte, error) {
	return escrow.abi.Pack("domainSeparator")
}

// UnpackDomainSeparator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf698da25.
//
// Solidity: function domainSeparator() view returns(bytes32)
func (escrow *Escrow) UnpackDomainSeparator(data []byte) ([32]byte, error) {
	out, err := escrow.abi.Unpack("domainSeparator", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackGetJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf729cf0d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getJob(bytes32 key) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock, uint8 members, uint64 lastJoin, uint32 quiet, uint8 minSigners)
func (escrow *Escrow) PackGetJob(key [32]byte) []byte {
	enc, err := escrow.abi.Pack("getJob", key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf729cf0d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getJob(bytes32 key) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock, uint8 members, uint64 lastJoin, uint32 quiet, uint8 minSigners)
func (escrow *Escrow) TryPackGetJob(key [32]byte) ([]byte, error) {
	return escrow.abi.Pack("getJob", key)
}

// GetJobOutput serves as a container for the return parameters of contract
// method GetJob.
type GetJobOutput struct {
	Creator       common.Address
	Amount        *big.Int
	Deadline      uint64
	State         uint8
	ClosedAtBlock *big.Int
	Members       uint8
	LastJoin      uint64
	Quiet         uint32
	MinSigners    uint8
}

// UnpackGetJob is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf729cf0d.
//
// Solidity: function getJob(bytes32 key) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock, uint8 members, uint64 lastJoin, uint32 quiet, uint8 minSigners)
func (escrow *Escrow) UnpackGetJob(data []byte) (GetJobOutput, error) {
	out, err := escrow.abi.Unpack("getJob", data)
	outstruct := new(GetJobOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Creator = *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	outstruct.Amount = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	outstruct.Deadline = *abi.ConvertType(out[2], new(uint64)).(*uint64)
	outstruct.State = *abi.ConvertType(out[3], new(uint8)).(*uint8)
	outstruct.ClosedAtBlock = abi.ConvertType(out[4], new(big.Int)).(*big.Int)
	outstruct.Members = *abi.ConvertType(out[5], new(uint8)).(*uint8)
	outstruct.LastJoin = *abi.ConvertType(out[6], new(uint64)).(*uint64)
	outstruct.Quiet = *abi.ConvertType(out[7], new(uint32)).(*uint32)
	outstruct.MinSigners = *abi.ConvertType(out[8], new(uint8)).(*uint8)
	return *outstruct, nil
}

// PackIsMember is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x10ad56b3.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function isMember(bytes32 key, address account) view returns(bool)
func (escrow *Escrow) PackIsMember(key [32]byte, account common.Address) []byte {
	enc, err := escrow.abi.Pack("isMember", key, account)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackIsMember is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x10ad56b3.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function isMember(bytes32 key, address account) view returns(bool)
func (escrow *Escrow) TryPackIsMember(key [32]byte, account common.Address) ([]byte, error) {
	return escrow.abi.Pack("isMember", key, account)
}

// UnpackIsMember is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x10ad56b3.
//
// Solidity: function isMember(bytes32 key, address account) view returns(bool)
func (escrow *Escrow) UnpackIsMember(data []byte) (bool, error) {
	out, err := escrow.abi.Unpack("isMember", data)
	if err != nil {
		return *new(bool), err
	}
	out0 := *abi.ConvertType(out[0], new(bool)).(*bool)
	return out0, nil
}

// PackJobKey is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6461d441.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function jobKey(address creator, bytes32 jobId) pure returns(bytes32)
func (escrow *Escrow) PackJobKey(creator common.Address, jobId [32]byte) []byte {
	enc, err := escrow.abi.Pack("jobKey", creator, jobId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackJobKey is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6461d441.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function jobKey(address creator, bytes32 jobId) pure returns(bytes32)
func (escrow *Escrow) TryPackJobKey(creator common.Address, jobId [32]byte) ([]byte, error) {
	return escrow.abi.Pack("jobKey", creator, jobId)
}

// UnpackJobKey is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6461d441.
//
// Solidity: function jobKey(address creator, bytes32 jobId) pure returns(bytes32)
func (escrow *Escrow) UnpackJobKey(data []byte) ([32]byte, error) {
	out, err := escrow.abi.Unpack("jobKey", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackJoin is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xad677d0b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function join(bytes32 key) returns()
func (escrow *Escrow) PackJoin(key [32]byte) []byte {
	enc, err := escrow.abi.Pack("join", key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackJoin is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xad677d0b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function join(bytes32 key) returns()
func (escrow *Escrow) TryPackJoin(key [32]byte) ([]byte, error) {
	return escrow.abi.Pack("join", key)
}

// PackMinStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x375b3c0a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function minStake() view returns(uint256)
func (escrow *Escrow) PackMinStake() []byte {
	enc, err := escrow.abi.Pack("minStake")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMinStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x375b3c0a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function minStake() view returns(uint256)
func (escrow *Escrow) TryPackMinStake() ([]byte, error) {
	return escrow.abi.Pack("minStake")
}

// UnpackMinStake is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x375b3c0a.
//
// Solidity: function minStake() view returns(uint256)
func (escrow *Escrow) UnpackMinStake(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("minStake", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackQuorumDenominator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x97c3d334.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function quorumDenominator() view returns(uint256)
func (escrow *Escrow) PackQuorumDenominator() []byte {
	enc, err := escrow.abi.Pack("quorumDenominator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackQuorumDenominator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x97c3d334.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function quorumDenominator() view returns(uint256)
func (escrow *Escrow) TryPackQuorumDenominator() ([]byte, error) {
	return escrow.abi.Pack("quorumDenominator")
}

// UnpackQuorumDenominator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x97c3d334.
//
// Solidity: function quorumDenominator() view returns(uint256)
func (escrow *Escrow) UnpackQuorumDenominator(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("quorumDenominator", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackQuorumNumerator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa7713a70.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function quorumNumerator() view returns(uint256)
func (escrow *Escrow) PackQuorumNumerator() []byte {
	enc, err := escrow.abi.Pack("quorumNumerator")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackQuorumNumerator is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xa7713a70.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function quorumNumerator() view returns(uint256)
func (escrow *Escrow) TryPackQuorumNumerator() ([]byte, error) {
	return escrow.abi.Pack("quorumNumerator")
}

// UnpackQuorumNumerator is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xa7713a70.
//
// Solidity: function quorumNumerator() view returns(uint256)
func (escrow *Escrow) UnpackQuorumNumerator(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("quorumNumerator", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7249fbb6.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function refund(bytes32 key) returns()
func (escrow *Escrow) PackRefund(key [32]byte) []byte {
	enc, err := escrow.abi.Pack("refund", key)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7249fbb6.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refund(bytes32 key) returns()
func (escrow *Escrow) TryPackRefund(key [32]byte) ([]byte, error) {
	return escrow.abi.Pack("refund", key)
}

// PackRequestUnstake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23095721.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function requestUnstake(uint256 amount) returns()
func (escrow *Escrow) PackRequestUnstake(amount *big.Int) []byte {
	enc, err := escrow.abi.Pack("requestUnstake", amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRequestUnstake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x23095721.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function requestUnstake(uint256 amount) returns()
func (escrow *Escrow) TryPackRequestUnstake(amount *big.Int) ([]byte, error) {
	return escrow.abi.Pack("requestUnstake", amount)
}

// PackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe99aac17.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(bytes32 key, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits, address[] signers, bytes[] signatures) returns()
func (escrow *Escrow) PackSettle(key [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address, signers []common.Address, signatures [][]byte) []byte {
	enc, err := escrow.abi.Pack("settle", key, seed, resultRoot, verifierHash, payees, amounts, culprits, signers, signatures)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe99aac17.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(bytes32 key, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits, address[] signers, bytes[] signatures) returns()
func (escrow *Escrow) TryPackSettle(key [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address, signers []common.Address, signatures [][]byte) ([]byte, error) {
	return escrow.abi.Pack("settle", key, seed, resultRoot, verifierHash, payees, amounts, culprits, signers, signatures)
}

// PackSettlementDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7e57bb5d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settlementDigest(bytes32 key, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
func (escrow *Escrow) PackSettlementDigest(key [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address) []byte {
	enc, err := escrow.abi.Pack("settlementDigest", key, seed, resultRoot, verifierHash, payees, amounts, culprits)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettlementDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7e57bb5d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settlementDigest(bytes32 key, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
func (escrow *Escrow) TryPackSettlementDigest(key [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address) ([]byte, error) {
	return escrow.abi.Pack("settlementDigest", key, seed, resultRoot, verifierHash, payees, amounts, culprits)
}

// UnpackSettlementDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7e57bb5d.
//
// Solidity: function settlementDigest(bytes32 key, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
func (escrow *Escrow) UnpackSettlementDigest(data []byte) ([32]byte, error) {
	out, err := escrow.abi.Unpack("settlementDigest", data)
	if err != nil {
		return *new([32]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([32]byte)).(*[32]byte)
	return out0, nil
}

// PackStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3a4b66f1.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function stake() payable returns()
func (escrow *Escrow) PackStake() []byte {
	enc, err := escrow.abi.Pack("stake")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3a4b66f1.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function stake() payable returns()
func (escrow *Escrow) TryPackStake() ([]byte, error) {
	return escrow.abi.Pack("stake")
}

// PackStakeOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42623360.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function stakeOf(address processor) view returns(uint256 active, uint256 pending, uint64 unlockAt)
func (escrow *Escrow) PackStakeOf(processor common.Address) []byte {
	enc, err := escrow.abi.Pack("stakeOf", processor)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackStakeOf is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42623360.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function stakeOf(address processor) view returns(uint256 active, uint256 pending, uint64 unlockAt)
func (escrow *Escrow) TryPackStakeOf(processor common.Address) ([]byte, error) {
	return escrow.abi.Pack("stakeOf", processor)
}

// StakeOfOutput serves as a container for the return parameters of contract
// method StakeOf.
type StakeOfOutput struct {
	Active   *big.Int
	Pending  *big.Int
	UnlockAt uint64
}

// UnpackStakeOf is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x42623360.
//
// Solidity: function stakeOf(address processor) view returns(uint256 active, uint256 pending, uint64 unlockAt)
func (escrow *Escrow) UnpackStakeOf(data []byte) (StakeOfOutput, error) {
	out, err := escrow.abi.Unpack("stakeOf", data)
	outstruct := new(StakeOfOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Active = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.Pending = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	outstruct.UnlockAt = *abi.ConvertType(out[2], new(uint64)).(*uint64)
	return *outstruct, nil
}

// PackTotalBurned is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd89135cd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function totalBurned() view returns(uint256)
func (escrow *Escrow) PackTotalBurned() []byte {
	enc, err := escrow.abi.Pack("totalBurned")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackTotalBurned is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xd89135cd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function totalBurned() view returns(uint256)
func (escrow *Escrow) TryPackTotalBurned() ([]byte, error) {
	return escrow.abi.Pack("totalBurned")
}

// UnpackTotalBurned is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xd89135cd.
//
// Solidity: function totalBurned() view returns(uint256)
func (escrow *Escrow) UnpackTotalBurned(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("totalBurned", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackUnstakeCooldown is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7eefd5ae.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function unstakeCooldown() view returns(uint256)
func (escrow *Escrow) PackUnstakeCooldown() []byte {
	enc, err := escrow.abi.Pack("unstakeCooldown")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackUnstakeCooldown is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7eefd5ae.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function unstakeCooldown() view returns(uint256)
func (escrow *Escrow) TryPackUnstakeCooldown() ([]byte, error) {
	return escrow.abi.Pack("unstakeCooldown")
}

// UnpackUnstakeCooldown is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7eefd5ae.
//
// Solidity: function unstakeCooldown() view returns(uint256)
func (escrow *Escrow) UnpackUnstakeCooldown(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("unstakeCooldown", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3ccfd60b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function withdraw() returns()
func (escrow *Escrow) PackWithdraw() []byte {
	enc, err := escrow.abi.Pack("withdraw")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x3ccfd60b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function withdraw() returns()
func (escrow *Escrow) TryPackWithdraw() ([]byte, error) {
	return escrow.abi.Pack("withdraw")
}

// PackWithdrawStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbed9d861.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function withdrawStake() returns()
func (escrow *Escrow) PackWithdrawStake() []byte {
	enc, err := escrow.abi.Pack("withdrawStake")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackWithdrawStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbed9d861.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function withdrawStake() returns()
func (escrow *Escrow) TryPackWithdrawStake() ([]byte, error) {
	return escrow.abi.Pack("withdrawStake")
}

// EscrowEscrowReleased represents a EscrowReleased event raised by the Escrow contract.
type EscrowEscrowReleased struct {
	Key          [32]byte
	ResultRoot   [32]byte
	VerifierHash [32]byte
	Payees       []common.Address
	Amounts      []*big.Int
	Refund       *big.Int
	Raw          *types.Log // Blockchain specific contextual infos
}

const EscrowEscrowReleasedEventName = "EscrowReleased"

// ContractEventName returns the user-defined event name.
func (EscrowEscrowReleased) ContractEventName() string {
	return EscrowEscrowReleasedEventName
}

// UnpackEscrowReleasedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event EscrowReleased(bytes32 indexed key, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, uint256 refund)
func (escrow *Escrow) UnpackEscrowReleasedEvent(log *types.Log) (*EscrowEscrowReleased, error) {
	event := "EscrowReleased"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowEscrowReleased)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowJobAborted represents a JobAborted event raised by the Escrow contract.
type EscrowJobAborted struct {
	Key     [32]byte
	Creator common.Address
	Amount  *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const EscrowJobAbortedEventName = "JobAborted"

// ContractEventName returns the user-defined event name.
func (EscrowJobAborted) ContractEventName() string {
	return EscrowJobAbortedEventName
}

// UnpackJobAbortedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event JobAborted(bytes32 indexed key, address indexed creator, uint256 amount)
func (escrow *Escrow) UnpackJobAbortedEvent(log *types.Log) (*EscrowJobAborted, error) {
	event := "JobAborted"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowJobAborted)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowJobCreated represents a JobCreated event raised by the Escrow contract.
type EscrowJobCreated struct {
	Key            [32]byte
	JobId          [32]byte
	Creator        common.Address
	Amount         *big.Int
	SeedCommitment [32]byte
	Deadline       uint64
	Quiet          uint32
	MinSigners     uint8
	Raw            *types.Log // Blockchain specific contextual infos
}

const EscrowJobCreatedEventName = "JobCreated"

// ContractEventName returns the user-defined event name.
func (EscrowJobCreated) ContractEventName() string {
	return EscrowJobCreatedEventName
}

// UnpackJobCreatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event JobCreated(bytes32 indexed key, bytes32 indexed jobId, address indexed creator, uint256 amount, bytes32 seedCommitment, uint64 deadline, uint32 quiet, uint8 minSigners)
func (escrow *Escrow) UnpackJobCreatedEvent(log *types.Log) (*EscrowJobCreated, error) {
	event := "JobCreated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowJobCreated)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowJoined represents a Joined event raised by the Escrow contract.
type EscrowJoined struct {
	Key       [32]byte
	Processor common.Address
	Members   *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const EscrowJoinedEventName = "Joined"

// ContractEventName returns the user-defined event name.
func (EscrowJoined) ContractEventName() string {
	return EscrowJoinedEventName
}

// UnpackJoinedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Joined(bytes32 indexed key, address indexed processor, uint256 members)
func (escrow *Escrow) UnpackJoinedEvent(log *types.Log) (*EscrowJoined, error) {
	event := "Joined"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowJoined)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowRefunded represents a Refunded event raised by the Escrow contract.
type EscrowRefunded struct {
	Key     [32]byte
	Creator common.Address
	Amount  *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const EscrowRefundedEventName = "Refunded"

// ContractEventName returns the user-defined event name.
func (EscrowRefunded) ContractEventName() string {
	return EscrowRefundedEventName
}

// UnpackRefundedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Refunded(bytes32 indexed key, address indexed creator, uint256 amount)
func (escrow *Escrow) UnpackRefundedEvent(log *types.Log) (*EscrowRefunded, error) {
	event := "Refunded"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowRefunded)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowSlashed represents a Slashed event raised by the Escrow contract.
type EscrowSlashed struct {
	Key     [32]byte
	Culprit common.Address
	Amount  *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const EscrowSlashedEventName = "Slashed"

// ContractEventName returns the user-defined event name.
func (EscrowSlashed) ContractEventName() string {
	return EscrowSlashedEventName
}

// UnpackSlashedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Slashed(bytes32 indexed key, address indexed culprit, uint256 amount)
func (escrow *Escrow) UnpackSlashedEvent(log *types.Log) (*EscrowSlashed, error) {
	event := "Slashed"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowSlashed)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowStakeWithdrawn represents a StakeWithdrawn event raised by the Escrow contract.
type EscrowStakeWithdrawn struct {
	Processor common.Address
	Amount    *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const EscrowStakeWithdrawnEventName = "StakeWithdrawn"

// ContractEventName returns the user-defined event name.
func (EscrowStakeWithdrawn) ContractEventName() string {
	return EscrowStakeWithdrawnEventName
}

// UnpackStakeWithdrawnEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event StakeWithdrawn(address indexed processor, uint256 amount)
func (escrow *Escrow) UnpackStakeWithdrawnEvent(log *types.Log) (*EscrowStakeWithdrawn, error) {
	event := "StakeWithdrawn"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowStakeWithdrawn)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowStaked represents a Staked event raised by the Escrow contract.
type EscrowStaked struct {
	Processor common.Address
	Amount    *big.Int
	Total     *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const EscrowStakedEventName = "Staked"

// ContractEventName returns the user-defined event name.
func (EscrowStaked) ContractEventName() string {
	return EscrowStakedEventName
}

// UnpackStakedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Staked(address indexed processor, uint256 amount, uint256 total)
func (escrow *Escrow) UnpackStakedEvent(log *types.Log) (*EscrowStaked, error) {
	event := "Staked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowStaked)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowUnstakeRequested represents a UnstakeRequested event raised by the Escrow contract.
type EscrowUnstakeRequested struct {
	Processor common.Address
	Amount    *big.Int
	UnlockAt  uint64
	Raw       *types.Log // Blockchain specific contextual infos
}

const EscrowUnstakeRequestedEventName = "UnstakeRequested"

// ContractEventName returns the user-defined event name.
func (EscrowUnstakeRequested) ContractEventName() string {
	return EscrowUnstakeRequestedEventName
}

// UnpackUnstakeRequestedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event UnstakeRequested(address indexed processor, uint256 amount, uint64 unlockAt)
func (escrow *Escrow) UnpackUnstakeRequestedEvent(log *types.Log) (*EscrowUnstakeRequested, error) {
	event := "UnstakeRequested"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowUnstakeRequested)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// EscrowWithdrawn represents a Withdrawn event raised by the Escrow contract.
type EscrowWithdrawn struct {
	Account common.Address
	Amount  *big.Int
	Raw     *types.Log // Blockchain specific contextual infos
}

const EscrowWithdrawnEventName = "Withdrawn"

// ContractEventName returns the user-defined event name.
func (EscrowWithdrawn) ContractEventName() string {
	return EscrowWithdrawnEventName
}

// UnpackWithdrawnEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event Withdrawn(address indexed account, uint256 amount)
func (escrow *Escrow) UnpackWithdrawnEvent(log *types.Log) (*EscrowWithdrawn, error) {
	event := "Withdrawn"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != escrow.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(EscrowWithdrawn)
	if len(log.Data) > 0 {
		if err := escrow.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range escrow.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// UnpackError attempts to decode the provided error data using user-defined
// error definitions.
func (escrow *Escrow) UnpackError(raw []byte) (any, error) {
	if bytes.Equal(raw[:4], escrow.abi.Errors["AlreadyMember"].ID.Bytes()[:4]) {
		return escrow.UnpackAlreadyMemberError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadAmount"].ID.Bytes()[:4]) {
		return escrow.UnpackBadAmountError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadCommitment"].ID.Bytes()[:4]) {
		return escrow.UnpackBadCommitmentError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadConfig"].ID.Bytes()[:4]) {
		return escrow.UnpackBadConfigError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadDeadline"].ID.Bytes()[:4]) {
		return escrow.UnpackBadDeadlineError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadMinSigners"].ID.Bytes()[:4]) {
		return escrow.UnpackBadMinSignersError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadSeed"].ID.Bytes()[:4]) {
		return escrow.UnpackBadSeedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["BadSignature"].ID.Bytes()[:4]) {
		return escrow.UnpackBadSignatureError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["CulpritIsPayee"].ID.Bytes()[:4]) {
		return escrow.UnpackCulpritIsPayeeError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["CulpritsNotSorted"].ID.Bytes()[:4]) {
		return escrow.UnpackCulpritsNotSortedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["DeadlineNotReached"].ID.Bytes()[:4]) {
		return escrow.UnpackDeadlineNotReachedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["InsufficientStake"].ID.Bytes()[:4]) {
		return escrow.UnpackInsufficientStakeError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["JobExists"].ID.Bytes()[:4]) {
		return escrow.UnpackJobExistsError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["JobExpired"].ID.Bytes()[:4]) {
		return escrow.UnpackJobExpiredError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["JobNotFunded"].ID.Bytes()[:4]) {
		return escrow.UnpackJobNotFundedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["JoinClosed"].ID.Bytes()[:4]) {
		return escrow.UnpackJoinClosedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["LengthMismatch"].ID.Bytes()[:4]) {
		return escrow.UnpackLengthMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NoMembers"].ID.Bytes()[:4]) {
		return escrow.UnpackNoMembersError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NotCreator"].ID.Bytes()[:4]) {
		return escrow.UnpackNotCreatorError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NotMember"].ID.Bytes()[:4]) {
		return escrow.UnpackNotMemberError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NotStaked"].ID.Bytes()[:4]) {
		return escrow.UnpackNotStakedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NothingToWithdraw"].ID.Bytes()[:4]) {
		return escrow.UnpackNothingToWithdrawError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["OverPayment"].ID.Bytes()[:4]) {
		return escrow.UnpackOverPaymentError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["PayeesNotSorted"].ID.Bytes()[:4]) {
		return escrow.UnpackPayeesNotSortedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["QuorumNotReached"].ID.Bytes()[:4]) {
		return escrow.UnpackQuorumNotReachedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["Reentrant"].ID.Bytes()[:4]) {
		return escrow.UnpackReentrantError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["SignerNotStaked"].ID.Bytes()[:4]) {
		return escrow.UnpackSignerNotStakedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["SignersNotSorted"].ID.Bytes()[:4]) {
		return escrow.UnpackSignersNotSortedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["StakeLocked"].ID.Bytes()[:4]) {
		return escrow.UnpackStakeLockedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TooEarly"].ID.Bytes()[:4]) {
		return escrow.UnpackTooEarlyError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TooFewSigners"].ID.Bytes()[:4]) {
		return escrow.UnpackTooFewSignersError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TooManyMembers"].ID.Bytes()[:4]) {
		return escrow.UnpackTooManyMembersError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TransferFailed"].ID.Bytes()[:4]) {
		return escrow.UnpackTransferFailedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["WorkStarted"].ID.Bytes()[:4]) {
		return escrow.UnpackWorkStartedError(raw[4:])
	}
	return nil, errors.New("Unknown error")
}

// EscrowAlreadyMember represents a AlreadyMember error raised by the Escrow contract.
type EscrowAlreadyMember struct {
	Key     [32]byte
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error AlreadyMember(bytes32 key, address account)
func EscrowAlreadyMemberErrorID() common.Hash {
	return common.HexToHash("0x762a112f6383006ffa5dbb9bea6bb8b7f4dd81e27f5cfecb2ddde483339eded7")
}

// UnpackAlreadyMemberError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error AlreadyMember(bytes32 key, address account)
func (escrow *Escrow) UnpackAlreadyMemberError(raw []byte) (*EscrowAlreadyMember, error) {
	out := new(EscrowAlreadyMember)
	if err := escrow.abi.UnpackIntoInterface(out, "AlreadyMember", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadAmount represents a BadAmount error raised by the Escrow contract.
type EscrowBadAmount struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadAmount()
func EscrowBadAmountErrorID() common.Hash {
	return common.HexToHash("0x749b593924416ea8f46d8a8f5b89dfc2a554f6cc168b31407d6be5e73a078ac0")
}

// UnpackBadAmountError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadAmount()
func (escrow *Escrow) UnpackBadAmountError(raw []byte) (*EscrowBadAmount, error) {
	out := new(EscrowBadAmount)
	if err := escrow.abi.UnpackIntoInterface(out, "BadAmount", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadCommitment represents a BadCommitment error raised by the Escrow contract.
type EscrowBadCommitment struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadCommitment()
func EscrowBadCommitmentErrorID() common.Hash {
	return common.HexToHash("0xc38b437f499baad3b63143308a5c0232e0d38a4455b1845a50e9b415e0aaf8fe")
}

// UnpackBadCommitmentError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadCommitment()
func (escrow *Escrow) UnpackBadCommitmentError(raw []byte) (*EscrowBadCommitment, error) {
	out := new(EscrowBadCommitment)
	if err := escrow.abi.UnpackIntoInterface(out, "BadCommitment", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadConfig represents a BadConfig error raised by the Escrow contract.
type EscrowBadConfig struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadConfig()
func EscrowBadConfigErrorID() common.Hash {
	return common.HexToHash("0x07cc321ce71a3eebb30014b3b8f136f5e867b17e2b76292bf086143aa7c7b50c")
}

// UnpackBadConfigError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadConfig()
func (escrow *Escrow) UnpackBadConfigError(raw []byte) (*EscrowBadConfig, error) {
	out := new(EscrowBadConfig)
	if err := escrow.abi.UnpackIntoInterface(out, "BadConfig", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadDeadline represents a BadDeadline error raised by the Escrow contract.
type EscrowBadDeadline struct {
	Deadline *big.Int
	Now      *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadDeadline(uint256 deadline, uint256 now_)
func EscrowBadDeadlineErrorID() common.Hash {
	return common.HexToHash("0x2cd0b0c290277eb78e53d0249b654dd8cbc8b1b3a791765008cee35eab626d96")
}

// UnpackBadDeadlineError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadDeadline(uint256 deadline, uint256 now_)
func (escrow *Escrow) UnpackBadDeadlineError(raw []byte) (*EscrowBadDeadline, error) {
	out := new(EscrowBadDeadline)
	if err := escrow.abi.UnpackIntoInterface(out, "BadDeadline", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadMinSigners represents a BadMinSigners error raised by the Escrow contract.
type EscrowBadMinSigners struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadMinSigners()
func EscrowBadMinSignersErrorID() common.Hash {
	return common.HexToHash("0x081948825e467a00f43972327048c983f6d0d6aabbc2f5c231deeb0ac6022704")
}

// UnpackBadMinSignersError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadMinSigners()
func (escrow *Escrow) UnpackBadMinSignersError(raw []byte) (*EscrowBadMinSigners, error) {
	out := new(EscrowBadMinSigners)
	if err := escrow.abi.UnpackIntoInterface(out, "BadMinSigners", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadSeed represents a BadSeed error raised by the Escrow contract.
type EscrowBadSeed struct {
	Key [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadSeed(bytes32 key)
func EscrowBadSeedErrorID() common.Hash {
	return common.HexToHash("0xf74e6104e3d6cf44d00f40ed490714cb968fe373257b4ff7e705546daf6782a7")
}

// UnpackBadSeedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadSeed(bytes32 key)
func (escrow *Escrow) UnpackBadSeedError(raw []byte) (*EscrowBadSeed, error) {
	out := new(EscrowBadSeed)
	if err := escrow.abi.UnpackIntoInterface(out, "BadSeed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowBadSignature represents a BadSignature error raised by the Escrow contract.
type EscrowBadSignature struct {
	Index *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadSignature(uint256 index)
func EscrowBadSignatureErrorID() common.Hash {
	return common.HexToHash("0xa1c973190ea39240abfd4da3039e0d94cea4d1e689acfee87f4e7dbabee0f307")
}

// UnpackBadSignatureError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadSignature(uint256 index)
func (escrow *Escrow) UnpackBadSignatureError(raw []byte) (*EscrowBadSignature, error) {
	out := new(EscrowBadSignature)
	if err := escrow.abi.UnpackIntoInterface(out, "BadSignature", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowCulpritIsPayee represents a CulpritIsPayee error raised by the Escrow contract.
type EscrowCulpritIsPayee struct {
	Culprit common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error CulpritIsPayee(address culprit)
func EscrowCulpritIsPayeeErrorID() common.Hash {
	return common.HexToHash("0x1e19823322fae22ea2c8364c95e95161c34ae7d9229419aaed84b820851787a3")
}

// UnpackCulpritIsPayeeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error CulpritIsPayee(address culprit)
func (escrow *Escrow) UnpackCulpritIsPayeeError(raw []byte) (*EscrowCulpritIsPayee, error) {
	out := new(EscrowCulpritIsPayee)
	if err := escrow.abi.UnpackIntoInterface(out, "CulpritIsPayee", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowCulpritsNotSorted represents a CulpritsNotSorted error raised by the Escrow contract.
type EscrowCulpritsNotSorted struct {
	Index *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error CulpritsNotSorted(uint256 index)
func EscrowCulpritsNotSortedErrorID() common.Hash {
	return common.HexToHash("0x30b543ad1267b57b10c04569397526663702704cc6dcfe38e895d964c9baf34e")
}

// UnpackCulpritsNotSortedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error CulpritsNotSorted(uint256 index)
func (escrow *Escrow) UnpackCulpritsNotSortedError(raw []byte) (*EscrowCulpritsNotSorted, error) {
	out := new(EscrowCulpritsNotSorted)
	if err := escrow.abi.UnpackIntoInterface(out, "CulpritsNotSorted", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowDeadlineNotReached represents a DeadlineNotReached error raised by the Escrow contract.
type EscrowDeadlineNotReached struct {
	Key      [32]byte
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DeadlineNotReached(bytes32 key, uint256 deadline)
func EscrowDeadlineNotReachedErrorID() common.Hash {
	return common.HexToHash("0xf1496019b28acc07b9987c8f8da71eb6bdbd97b62b91a9520291b392bc8b9445")
}

// UnpackDeadlineNotReachedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DeadlineNotReached(bytes32 key, uint256 deadline)
func (escrow *Escrow) UnpackDeadlineNotReachedError(raw []byte) (*EscrowDeadlineNotReached, error) {
	out := new(EscrowDeadlineNotReached)
	if err := escrow.abi.UnpackIntoInterface(out, "DeadlineNotReached", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowInsufficientStake represents a InsufficientStake error raised by the Escrow contract.
type EscrowInsufficientStake struct {
	Requested *big.Int
	Stake     *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error InsufficientStake(uint256 requested, uint256 stake)
func EscrowInsufficientStakeErrorID() common.Hash {
	return common.HexToHash("0x45be0a261a88f9fedc41221879f08865d5e8d6053c877967e6e8e39e5697e6d5")
}

// UnpackInsufficientStakeError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error InsufficientStake(uint256 requested, uint256 stake)
func (escrow *Escrow) UnpackInsufficientStakeError(raw []byte) (*EscrowInsufficientStake, error) {
	out := new(EscrowInsufficientStake)
	if err := escrow.abi.UnpackIntoInterface(out, "InsufficientStake", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJobExists represents a JobExists error raised by the Escrow contract.
type EscrowJobExists struct {
	Key [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobExists(bytes32 key)
func EscrowJobExistsErrorID() common.Hash {
	return common.HexToHash("0x9e2b4bfd54f0778ae5b46dc678017f9ac3f783c5abec883f886f9464cfd3e050")
}

// UnpackJobExistsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobExists(bytes32 key)
func (escrow *Escrow) UnpackJobExistsError(raw []byte) (*EscrowJobExists, error) {
	out := new(EscrowJobExists)
	if err := escrow.abi.UnpackIntoInterface(out, "JobExists", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJobExpired represents a JobExpired error raised by the Escrow contract.
type EscrowJobExpired struct {
	Key      [32]byte
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobExpired(bytes32 key, uint256 deadline)
func EscrowJobExpiredErrorID() common.Hash {
	return common.HexToHash("0xf452a84463ea8e1a7ac0a64252cf600ce6a20fbddac033c8fddc0a60672cff53")
}

// UnpackJobExpiredError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobExpired(bytes32 key, uint256 deadline)
func (escrow *Escrow) UnpackJobExpiredError(raw []byte) (*EscrowJobExpired, error) {
	out := new(EscrowJobExpired)
	if err := escrow.abi.UnpackIntoInterface(out, "JobExpired", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJobNotFunded represents a JobNotFunded error raised by the Escrow contract.
type EscrowJobNotFunded struct {
	Key   [32]byte
	State uint8
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobNotFunded(bytes32 key, uint8 state)
func EscrowJobNotFundedErrorID() common.Hash {
	return common.HexToHash("0x769050df8b37347648dbb8c3af6b0c16cd656374df20ab7b0d4af7e9ad35ea42")
}

// UnpackJobNotFundedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobNotFunded(bytes32 key, uint8 state)
func (escrow *Escrow) UnpackJobNotFundedError(raw []byte) (*EscrowJobNotFunded, error) {
	out := new(EscrowJobNotFunded)
	if err := escrow.abi.UnpackIntoInterface(out, "JobNotFunded", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJoinClosed represents a JoinClosed error raised by the Escrow contract.
type EscrowJoinClosed struct {
	Key      [32]byte
	ClosedAt *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JoinClosed(bytes32 key, uint256 closedAt)
func EscrowJoinClosedErrorID() common.Hash {
	return common.HexToHash("0x6fd42eb0bac963a01e3b076a0bf1296eee3735724a6c3c0b37e0a67d1a9059ce")
}

// UnpackJoinClosedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JoinClosed(bytes32 key, uint256 closedAt)
func (escrow *Escrow) UnpackJoinClosedError(raw []byte) (*EscrowJoinClosed, error) {
	out := new(EscrowJoinClosed)
	if err := escrow.abi.UnpackIntoInterface(out, "JoinClosed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowLengthMismatch represents a LengthMismatch error raised by the Escrow contract.
type EscrowLengthMismatch struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error LengthMismatch()
func EscrowLengthMismatchErrorID() common.Hash {
	return common.HexToHash("0xff633a3803c58b9bc21e58efecee59f27e033cc0b1883fccb4969c76146fe60f")
}

// UnpackLengthMismatchError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error LengthMismatch()
func (escrow *Escrow) UnpackLengthMismatchError(raw []byte) (*EscrowLengthMismatch, error) {
	out := new(EscrowLengthMismatch)
	if err := escrow.abi.UnpackIntoInterface(out, "LengthMismatch", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowNoMembers represents a NoMembers error raised by the Escrow contract.
type EscrowNoMembers struct {
	Key [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NoMembers(bytes32 key)
func EscrowNoMembersErrorID() common.Hash {
	return common.HexToHash("0x390cc79d68a3002dd3a3158251951c38f2acc683512c7e3069f45061b79101d9")
}

// UnpackNoMembersError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NoMembers(bytes32 key)
func (escrow *Escrow) UnpackNoMembersError(raw []byte) (*EscrowNoMembers, error) {
	out := new(EscrowNoMembers)
	if err := escrow.abi.UnpackIntoInterface(out, "NoMembers", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowNotCreator represents a NotCreator error raised by the Escrow contract.
type EscrowNotCreator struct {
	Caller  common.Address
	Creator common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotCreator(address caller, address creator)
func EscrowNotCreatorErrorID() common.Hash {
	return common.HexToHash("0xffb87b72c92a85ae6d7c44561e530309a10023e32accfbde9c3d70671ddd4700")
}

// UnpackNotCreatorError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotCreator(address caller, address creator)
func (escrow *Escrow) UnpackNotCreatorError(raw []byte) (*EscrowNotCreator, error) {
	out := new(EscrowNotCreator)
	if err := escrow.abi.UnpackIntoInterface(out, "NotCreator", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowNotMember represents a NotMember error raised by the Escrow contract.
type EscrowNotMember struct {
	Key     [32]byte
	Account common.Address
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotMember(bytes32 key, address account)
func EscrowNotMemberErrorID() common.Hash {
	return common.HexToHash("0x0a6c3de1373ea369e782ab939f5be2592061d5a8919c53bc658c26fa7b6c57f6")
}

// UnpackNotMemberError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotMember(bytes32 key, address account)
func (escrow *Escrow) UnpackNotMemberError(raw []byte) (*EscrowNotMember, error) {
	out := new(EscrowNotMember)
	if err := escrow.abi.UnpackIntoInterface(out, "NotMember", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowNotStaked represents a NotStaked error raised by the Escrow contract.
type EscrowNotStaked struct {
	Account  common.Address
	Stake    *big.Int
	MinStake *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NotStaked(address account, uint256 stake, uint256 minStake)
func EscrowNotStakedErrorID() common.Hash {
	return common.HexToHash("0xa112319f81dd50bdf9b4ce9a68763e1f3a92d145c49a453cd1ee6a948875aa90")
}

// UnpackNotStakedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NotStaked(address account, uint256 stake, uint256 minStake)
func (escrow *Escrow) UnpackNotStakedError(raw []byte) (*EscrowNotStaked, error) {
	out := new(EscrowNotStaked)
	if err := escrow.abi.UnpackIntoInterface(out, "NotStaked", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowNothingToWithdraw represents a NothingToWithdraw error raised by the Escrow contract.
type EscrowNothingToWithdraw struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error NothingToWithdraw()
func EscrowNothingToWithdrawErrorID() common.Hash {
	return common.HexToHash("0xd0d04f60bf4f7629141a1f00f5d2908fa0f3e15bf4cbf8bb8edc6fcbdf2509fa")
}

// UnpackNothingToWithdrawError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error NothingToWithdraw()
func (escrow *Escrow) UnpackNothingToWithdrawError(raw []byte) (*EscrowNothingToWithdraw, error) {
	out := new(EscrowNothingToWithdraw)
	if err := escrow.abi.UnpackIntoInterface(out, "NothingToWithdraw", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowOverPayment represents a OverPayment error raised by the Escrow contract.
type EscrowOverPayment struct {
	Total  *big.Int
	Escrow *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error OverPayment(uint256 total, uint256 escrow)
func EscrowOverPaymentErrorID() common.Hash {
	return common.HexToHash("0x666f7b845009a4761076da908a134ab5c15574ec77441a2eae06b032a91066c3")
}

// UnpackOverPaymentError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error OverPayment(uint256 total, uint256 escrow)
func (escrow *Escrow) UnpackOverPaymentError(raw []byte) (*EscrowOverPayment, error) {
	out := new(EscrowOverPayment)
	if err := escrow.abi.UnpackIntoInterface(out, "OverPayment", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowPayeesNotSorted represents a PayeesNotSorted error raised by the Escrow contract.
type EscrowPayeesNotSorted struct {
	Index *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error PayeesNotSorted(uint256 index)
func EscrowPayeesNotSortedErrorID() common.Hash {
	return common.HexToHash("0x85f690012bb1d1936c3046251225e55b1fca10392a95bab205299be54535ed4c")
}

// UnpackPayeesNotSortedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error PayeesNotSorted(uint256 index)
func (escrow *Escrow) UnpackPayeesNotSortedError(raw []byte) (*EscrowPayeesNotSorted, error) {
	out := new(EscrowPayeesNotSorted)
	if err := escrow.abi.UnpackIntoInterface(out, "PayeesNotSorted", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowQuorumNotReached represents a QuorumNotReached error raised by the Escrow contract.
type EscrowQuorumNotReached struct {
	Signatures *big.Int
	Members    *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error QuorumNotReached(uint256 signatures, uint256 members)
func EscrowQuorumNotReachedErrorID() common.Hash {
	return common.HexToHash("0x6a2159843653f10db54c042cb44fca2acd5ab362e9d6b07cb6ba038cc88440ed")
}

// UnpackQuorumNotReachedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error QuorumNotReached(uint256 signatures, uint256 members)
func (escrow *Escrow) UnpackQuorumNotReachedError(raw []byte) (*EscrowQuorumNotReached, error) {
	out := new(EscrowQuorumNotReached)
	if err := escrow.abi.UnpackIntoInterface(out, "QuorumNotReached", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowReentrant represents a Reentrant error raised by the Escrow contract.
type EscrowReentrant struct {
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error Reentrant()
func EscrowReentrantErrorID() common.Hash {
	return common.HexToHash("0xed3ba6a62877a99990a32617b4e001f2c85c7886f010c9b166e8438fd38bcb40")
}

// UnpackReentrantError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error Reentrant()
func (escrow *Escrow) UnpackReentrantError(raw []byte) (*EscrowReentrant, error) {
	out := new(EscrowReentrant)
	if err := escrow.abi.UnpackIntoInterface(out, "Reentrant", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowSignerNotStaked represents a SignerNotStaked error raised by the Escrow contract.
type EscrowSignerNotStaked struct {
	Signer   common.Address
	Stake    *big.Int
	MinStake *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SignerNotStaked(address signer, uint256 stake, uint256 minStake)
func EscrowSignerNotStakedErrorID() common.Hash {
	return common.HexToHash("0x4ae8d7940ec60c7e150a35e39a2fbb781e81c2074941f6191f21867f950ec2e0")
}

// UnpackSignerNotStakedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SignerNotStaked(address signer, uint256 stake, uint256 minStake)
func (escrow *Escrow) UnpackSignerNotStakedError(raw []byte) (*EscrowSignerNotStaked, error) {
	out := new(EscrowSignerNotStaked)
	if err := escrow.abi.UnpackIntoInterface(out, "SignerNotStaked", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowSignersNotSorted represents a SignersNotSorted error raised by the Escrow contract.
type EscrowSignersNotSorted struct {
	Index *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error SignersNotSorted(uint256 index)
func EscrowSignersNotSortedErrorID() common.Hash {
	return common.HexToHash("0x151f10f86bf4480fbedfdcb66cc3252205bafbd1bb4d06cbab5e6422ecd5ac9b")
}

// UnpackSignersNotSortedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error SignersNotSorted(uint256 index)
func (escrow *Escrow) UnpackSignersNotSortedError(raw []byte) (*EscrowSignersNotSorted, error) {
	out := new(EscrowSignersNotSorted)
	if err := escrow.abi.UnpackIntoInterface(out, "SignersNotSorted", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowStakeLocked represents a StakeLocked error raised by the Escrow contract.
type EscrowStakeLocked struct {
	UnlockAt uint64
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error StakeLocked(uint64 unlockAt)
func EscrowStakeLockedErrorID() common.Hash {
	return common.HexToHash("0x68a2053c541711e2ff09fbad0cfdb8ccb48b3380c7b25396271bb41985b31519")
}

// UnpackStakeLockedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error StakeLocked(uint64 unlockAt)
func (escrow *Escrow) UnpackStakeLockedError(raw []byte) (*EscrowStakeLocked, error) {
	out := new(EscrowStakeLocked)
	if err := escrow.abi.UnpackIntoInterface(out, "StakeLocked", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowTooEarly represents a TooEarly error raised by the Escrow contract.
type EscrowTooEarly struct {
	Key     [32]byte
	OpensAt *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TooEarly(bytes32 key, uint256 opensAt)
func EscrowTooEarlyErrorID() common.Hash {
	return common.HexToHash("0xd47800eb984781e618d3ef09d15b11990498dd645bcb492de136376092814baf")
}

// UnpackTooEarlyError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TooEarly(bytes32 key, uint256 opensAt)
func (escrow *Escrow) UnpackTooEarlyError(raw []byte) (*EscrowTooEarly, error) {
	out := new(EscrowTooEarly)
	if err := escrow.abi.UnpackIntoInterface(out, "TooEarly", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowTooFewSigners represents a TooFewSigners error raised by the Escrow contract.
type EscrowTooFewSigners struct {
	Signatures *big.Int
	MinSigners *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TooFewSigners(uint256 signatures, uint256 minSigners)
func EscrowTooFewSignersErrorID() common.Hash {
	return common.HexToHash("0xcd2ce46f165a166329af0af93ac44cae04c7d671499871ad15fa7ba75563db14")
}

// UnpackTooFewSignersError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TooFewSigners(uint256 signatures, uint256 minSigners)
func (escrow *Escrow) UnpackTooFewSignersError(raw []byte) (*EscrowTooFewSigners, error) {
	out := new(EscrowTooFewSigners)
	if err := escrow.abi.UnpackIntoInterface(out, "TooFewSigners", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowTooManyMembers represents a TooManyMembers error raised by the Escrow contract.
type EscrowTooManyMembers struct {
	Key [32]byte
	Max *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TooManyMembers(bytes32 key, uint256 max)
func EscrowTooManyMembersErrorID() common.Hash {
	return common.HexToHash("0x9ad181bc82864fa836ade2b691ac694e89bacdb417a1e6aef8c137665e13b418")
}

// UnpackTooManyMembersError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TooManyMembers(bytes32 key, uint256 max)
func (escrow *Escrow) UnpackTooManyMembersError(raw []byte) (*EscrowTooManyMembers, error) {
	out := new(EscrowTooManyMembers)
	if err := escrow.abi.UnpackIntoInterface(out, "TooManyMembers", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowTransferFailed represents a TransferFailed error raised by the Escrow contract.
type EscrowTransferFailed struct {
	To     common.Address
	Amount *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TransferFailed(address to, uint256 amount)
func EscrowTransferFailedErrorID() common.Hash {
	return common.HexToHash("0x1c43b9761b3fba5321ca8212bfc231945f668ccc0c446f333999eea9ce8fda81")
}

// UnpackTransferFailedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TransferFailed(address to, uint256 amount)
func (escrow *Escrow) UnpackTransferFailedError(raw []byte) (*EscrowTransferFailed, error) {
	out := new(EscrowTransferFailed)
	if err := escrow.abi.UnpackIntoInterface(out, "TransferFailed", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowWorkStarted represents a WorkStarted error raised by the Escrow contract.
type EscrowWorkStarted struct {
	Key     [32]byte
	Members *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error WorkStarted(bytes32 key, uint256 members)
func EscrowWorkStartedErrorID() common.Hash {
	return common.HexToHash("0xa77c5716d19969c9f7faa3f9e7552bd9ce9df8bc522a7c9636b749a3d0b5e08d")
}

// UnpackWorkStartedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error WorkStarted(bytes32 key, uint256 members)
func (escrow *Escrow) UnpackWorkStartedError(raw []byte) (*EscrowWorkStarted, error) {
	out := new(EscrowWorkStarted)
	if err := escrow.abi.UnpackIntoInterface(out, "WorkStarted", raw); err != nil {
		return nil, err
	}
	return out, nil
}
