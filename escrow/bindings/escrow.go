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
	ABI: "[{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"minStake_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"quorumNumerator_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"quorumDenominator_\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"unstakeCooldown_\",\"type\":\"uint256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"BadAmount\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadCommitment\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"BadConfig\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"now_\",\"type\":\"uint256\"}],\"name\":\"BadDeadline\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"BadSeed\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"BadSignature\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"culprit\",\"type\":\"address\"}],\"name\":\"CulpritIsPayee\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"CulpritsNotSorted\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"DeadlineNotReached\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"requested\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"stake\",\"type\":\"uint256\"}],\"name\":\"InsufficientStake\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"JobExists\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"uint256\",\"name\":\"deadline\",\"type\":\"uint256\"}],\"name\":\"JobExpired\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"uint8\",\"name\":\"state\",\"type\":\"uint8\"}],\"name\":\"JobNotFunded\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"LengthMismatch\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"caller\",\"type\":\"address\"},{\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"}],\"name\":\"NotCreator\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"NothingToWithdraw\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"escrow\",\"type\":\"uint256\"}],\"name\":\"OverPayment\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"index\",\"type\":\"uint256\"}],\"name\":\"PayeesNotSorted\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"signatures\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"payees\",\"type\":\"uint256\"}],\"name\":\"QuorumNotReached\",\"type\":\"error\"},{\"inputs\":[],\"name\":\"Reentrant\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"signer\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"stake\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"minStake\",\"type\":\"uint256\"}],\"name\":\"SignerNotStaked\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"name\":\"StakeLocked\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"count\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"max\",\"type\":\"uint256\"}],\"name\":\"TooManyPayees\",\"type\":\"error\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"TransferFailed\",\"type\":\"error\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"indexed\":false,\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"refund\",\"type\":\"uint256\"}],\"name\":\"EscrowReleased\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"JobAborted\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"seedCommitment\",\"type\":\"bytes32\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"}],\"name\":\"JobCreated\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Refunded\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"culprit\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Slashed\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"StakeWithdrawn\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"total\",\"type\":\"uint256\"}],\"name\":\"Staked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"name\":\"UnstakeRequested\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"Withdrawn\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"MAX_PAYEES\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"SETTLEMENT_TYPEHASH\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"abort\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seedCommitment\",\"type\":\"bytes32\"},{\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"}],\"name\":\"createJob\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"account\",\"type\":\"address\"}],\"name\":\"creditOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"domainSeparator\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"getJob\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"creator\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"},{\"internalType\":\"uint8\",\"name\":\"state\",\"type\":\"uint8\"},{\"internalType\":\"uint256\",\"name\":\"closedAtBlock\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"minStake\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"quorumDenominator\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"quorumNumerator\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"}],\"name\":\"refund\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"amount\",\"type\":\"uint256\"}],\"name\":\"requestUnstake\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seed\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"internalType\":\"address[]\",\"name\":\"culprits\",\"type\":\"address[]\"},{\"internalType\":\"bytes[]\",\"name\":\"signatures\",\"type\":\"bytes[]\"}],\"name\":\"settle\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seed\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"resultRoot\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"verifierHash\",\"type\":\"bytes32\"},{\"internalType\":\"address[]\",\"name\":\"payees\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"},{\"internalType\":\"address[]\",\"name\":\"culprits\",\"type\":\"address[]\"}],\"name\":\"settlementDigest\",\"outputs\":[{\"internalType\":\"bytes32\",\"name\":\"\",\"type\":\"bytes32\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"stake\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"processor\",\"type\":\"address\"}],\"name\":\"stakeOf\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"active\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"pending\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"unlockAt\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"totalBurned\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"unstakeCooldown\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"withdrawStake\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "Escrow",
	Bin: "0x61014080604052346101dc5760808161235e803803809161002082856101e0565b8339810103126101dc5780519060208101516060604083015192015192801580156101d4575b80156101cb575b801561018b575b801561017b575b61016c5760805260a05260c05260e052466101005260405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527f7db6e4bfdda2c336fbd01808c3bd3350ea4873abff3ea93dfcb9f15b02aab08160408201527fc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc660608201524660808201523060a082015260a0815261010260c0826101e0565b5190206101205260405161214690816102188239608051818181610d00015261126c015260a0518181816106c801526112ea015260c05181818161070201526112c0015260e05181818161073c0152610e2601526101005181611fae015261012051816120670152f35b6301f30c8760e21b5f5260045ffd5b506001600160401b03831161005b565b5060038202828104600314831517156101b7578360011b90848204600214851517156101b75710610054565b634e487b7160e01b5f52601160045260245ffd5b5082821161004d565b508215610046565b5f80fd5b601f909101601f19168101906001600160401b0382119082101761020357604052565b634e487b7160e01b5f52604160045260245ffdfe60806040526004361015610011575f80fd5b5f3560e01c80630684fe09146110f657806309d6ce0e14610f5c5780632309572114610d23578063375b3c0a14610ce95780633a4b66f114610be35780633ccfd60b14610b555780634262336014610a665780635ecc86e814610a4a5780637249fbb61461083657806375807250146107ee5780637e57bb5d1461075f5780637eefd5ae1461072557806397c3d334146106eb578063a7713a70146106b1578063b1fb79c014610677578063bed9d8611461051b578063ce01288a146101f2578063d89135cd146101d5578063f698da25146101b35763f729cf0d146100f5575f80fd5b346101af5760206003193601126101af5760a05f6004355f525f60205261011e60405f20611bc2565b9073ffffffffffffffffffffffffffffffffffffffff825116916bffffffffffffffffffffffff60208201511664ffffffffff6060830151169060ff6080840151169260018411610187575b506040519485526020850152604084015260608301526080820152f35b6040015179ffffffffffffffffffffffffffffffffffffffffffffffffffff1693505f61016a565b5f80fd5b346101af575f6003193601126101af5760206101cd611fac565b604051908152f35b346101af575f6003193601126101af576020600254604051908152f35b60606003193601126101af576004356024359060443567ffffffffffffffff8116908181036101af5760ff5f5c166104f357600160ff195f5c16175f5d825f525f602052600160405f20015460f81c6104c757341580156104b2575b61048a5742821180159061047c575b61044c578315610424576040519061027482611b65565b33825260208201906bffffffffffffffffffffffff3416825279ffffffffffffffffffffffffffffffffffffffffffffffffffff80600160408601958960301c875264ffffffffff60608201951685526080810195828752895f525f6020527fffffffffffffffffffffffff000000000000000000000000000000000000000073ffffffffffffffffffffffffffffffffffffffff60405f20935116915160a01b1617815501945116167fffffffffffff0000000000000000000000000000000000000000000000000000845416178355517fff0000000000ffffffffffffffffffffffffffffffffffffffffffffffffffff7effffffffff000000000000000000000000000000000000000000000000000084549260d01b169116178255517effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7fff000000000000000000000000000000000000000000000000000000000000008084549360f81b1616911617905560405192348452602084015260408301527f71ceaa17c5c653255a2ce13a37d1983f990f09e04e64e71c0e3116b0a5e7811f60603393a360ff195f5c165f5d005b7fc38b437f000000000000000000000000000000000000000000000000000000005f5260045ffd5b507f2cd0b0c2000000000000000000000000000000000000000000000000000000005f526004524260245260445ffd5b5064ffffffffff821161025d565b7f749b5939000000000000000000000000000000000000000000000000000000005f5260045ffd5b506bffffffffffffffffffffffff341161024e565b827f9e2b4bfd000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7fed3ba6a6000000000000000000000000000000000000000000000000000000005f5260045ffd5b346101af575f6003193601126101af5760ff5f5c166104f357600160ff195f5c16175f5d335f526001602052600160405f20018054906fffffffffffffffffffffffffffffffff821691821561064f5767ffffffffffffffff9060801c16804210610624575080547fffffffffffffffff00000000000000000000000000000000000000000000000016905560405181815233907f8108595eb6bad3acefa9da467d90cc2217686d5c5ac85460f8b7849c840645fc90602090a25f80808084335af16105e5611d71565b50156105f55760ff195f5c165f5d005b7f1c43b976000000000000000000000000000000000000000000000000000000005f523360045260245260445ffd5b7f68a2053c000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b7fd0d04f60000000000000000000000000000000000000000000000000000000005f5260045ffd5b346101af575f6003193601126101af5760206040517f289ec94153b8f2019af4b1c997515fe1e79e22cf4ae52e34d49e4c9b215f92358152f35b346101af575f6003193601126101af5760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346101af575f6003193601126101af5760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346101af575f6003193601126101af5760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346101af5760e06003193601126101af5760843567ffffffffffffffff81116101af57610790903690600401611af0565b60a43567ffffffffffffffff81116101af576107b0903690600401611af0565b91909260c4359267ffffffffffffffff84116101af576020946107da6101cd953690600401611af0565b949093606435604435602435600435611e13565b346101af5760206003193601126101af5773ffffffffffffffffffffffffffffffffffffffff61081c611b21565b165f526001602052602060405f205460801c604051908152f35b346101af5760206003193601126101af5760043560ff5f5c166104f357600160ff195f5c16175f5d805f525f60205260405f209061087382611bc2565b9160ff60808401511660018103610a1b575064ffffffffff606084015116804211156109ec57506001017f03000000000000000000000000000000000000000000000000000000000000007effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff82541617815579ffffffffffffffffffffffffffffffffffffffffffffffffffff804316167fffffffffffff00000000000000000000000000000000000000000000000000008254161790557ff552ca82e113ac3c539c3d617f29fcd19c172a0c75dad017555c9e109f7fe18360206bffffffffffffffffffffffff73ffffffffffffffffffffffffffffffffffffffff828601956109d683885116838351165f526001865261099660405f2091825460801c611d3f565b6fffffffffffffffffffffffffffffffff7fffffffffffffffffffffffffffffffff0000000000000000000000000000000083549260801b169116179055565b5116945116604051908152a360ff195f5c165f5d005b827ff1496019000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b827f769050df000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b346101af575f6003193601126101af5760206040516101008152f35b346101af5760206003193601126101af5773ffffffffffffffffffffffffffffffffffffffff610a94611b21565b165f52600160205260405f20604051906080820182811067ffffffffffffffff821117610b2857606092839160405260018354936fffffffffffffffffffffffffffffffff85169485845260801c602084015201549067ffffffffffffffff6fffffffffffffffffffffffffffffffff83169283604084015260801c16928391015260405192835260208301526040820152f35b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b346101af575f6003193601126101af5760ff5f5c166104f357600160ff195f5c16175f5d335f52600160205260405f20805460801c90811561064f576fffffffffffffffffffffffffffffffff81541690556040518181527f7084f5476618d8e60b11ef0d7d3f06914655adb8793e28ff7f018d4c76d505d560203392a25f80808084335af16105e5611d71565b5f6003193601126101af5760ff5f5c166104f357600160ff195f5c16175f5d34158015610cd4575b61048a57335f52600160205260405f20610c4b6fffffffffffffffffffffffffffffffff8254166fffffffffffffffffffffffffffffffff341690611d3f565b906fffffffffffffffffffffffffffffffff82167fffffffffffffffffffffffffffffffff000000000000000000000000000000008254161790556fffffffffffffffffffffffffffffffff604051913483521660208201527f1449c6dd7851abc30abf37f57715f492010519147cc2652fbc38202c18a6ee9060403392a260ff195f5c165f5d005b506bffffffffffffffffffffffff3411610c0b565b346101af575f6003193601126101af5760206040517f00000000000000000000000000000000000000000000000000000000000000008152f35b346101af5760206003193601126101af5760043560ff5f5c166104f357600160ff195f5c16175f5d335f52600160205260405f2081158015610f40575b610efd576fffffffffffffffffffffffffffffffff8216806fffffffffffffffffffffffffffffffff835416036fffffffffffffffffffffffffffffffff8111610ed057610df9600167ffffffffffffffff946fffffffffffffffffffffffffffffffff8094167fffffffffffffffffffffffffffffffff00000000000000000000000000000000825416178155019282845416611d3f565b167fffffffffffffffffffffffffffffffff00000000000000000000000000000000825416178155610e4b7f000000000000000000000000000000000000000000000000000000000000000042611c92565b9080547fffffffffffffffff0000000000000000ffffffffffffffffffffffffffffffff77ffffffffffffffff00000000000000000000000000000000808560801b161691161790556040519283521660208201527f21020437c0e4b58b34bd7ac1f1cef55e7820d1bcd93824ceb273cad96eea704c60403392a260ff195f5c165f5d005b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b6fffffffffffffffffffffffffffffffff905416907f45be0a26000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b506fffffffffffffffffffffffffffffffff8154168211610d60565b346101af5760206003193601126101af5760043560ff5f5c166104f357600160ff195f5c16175f5d805f525f60205260405f2090610f9982611bc2565b9160ff60808401511660018103610a1b575073ffffffffffffffffffffffffffffffffffffffff8351168033036110c757506001017f04000000000000000000000000000000000000000000000000000000000000007effffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff82541617815579ffffffffffffffffffffffffffffffffffffffffffffffffffff804316167fffffffffffff00000000000000000000000000000000000000000000000000008254161790557f9bdb223fe8dacdd3c3622447e65edc253d846373ed2dcbe1f11745dc04187df160206bffffffffffffffffffffffff73ffffffffffffffffffffffffffffffffffffffff828601956109d683885116838351165f526001865261099660405f2091825460801c611d3f565b7fffb87b72000000000000000000000000000000000000000000000000000000005f523360045260245260445ffd5b346101af576101006003193601126101af5760243560843567ffffffffffffffff81116101af5761112b903690600401611af0565b60a43567ffffffffffffffff81116101af5761114b903690600401611af0565b60c49491943567ffffffffffffffff81116101af5761116e903690600401611af0565b60e43567ffffffffffffffff81116101af5761118e903690600401611af0565b949060ff5f5c166104f357600160ff195f5c16175f5d6004355f525f60205260405f20906111bb82611bc2565b9260ff60808501511660018103611abf575064ffffffffff606085015116804211611a8e57506040516020810190828252602081526111fb604082611b81565b51902060301c79ffffffffffffffffffffffffffffffffffffffffffffffffffff60408601511603611a605788158015611a56575b8015611a4c575b611a245761010089118015611a19575b6119e7578486888d8c8e611265966064359060443590600435611e13565b5f978892917f00000000000000000000000000000000000000000000000000000000000000009184808d8f5b8184106118375750505050505050506bffffffffffffffffffffffff60208401511680881161180857506112e57f000000000000000000000000000000000000000000000000000000000000000082611d2c565b61130f7f00000000000000000000000000000000000000000000000000000000000000008a611d2c565b116117d857509697965f80805b8583106116615750505060010180547effffffffff0000000000000000000000000000000000000000000000000000164379ffffffffffffffffffffffffffffffffffffffffffffffffffff16177f02000000000000000000000000000000000000000000000000000000000000001790555f5b8681106115f357506bffffffffffffffffffffffff6020820151169480860395808711610ed057036115a7575b505f5b8181106114a957505050604051928060a085016044358652606435602087015260a060408701525260c0840195905f5b8181106114745750505082850360608401528085527f07ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff81116101af577f82ce5d2543ea05265e7144ae2b7f997ecf16d435da92112c10237f1262e33b1a93602092849260051b80928589013760808301526004359501030190a260ff195f5c165f5d005b90919660208060019273ffffffffffffffffffffffffffffffffffffffff61149b8c611b44565b1681520198019291016113f0565b8073ffffffffffffffffffffffffffffffffffffffff6114d46114cf6001948688611c34565b611c71565b16805f528260205260405f206fffffffffffffffffffffffffffffffff815416611515858301916fffffffffffffffffffffffffffffffff83541690611c92565b82547fffffffffffffffffffffffffffffffff000000000000000000000000000000001690925580547fffffffffffffffff000000000000000000000000000000000000000000000000169055600254611570908290611c92565b6002556040519081527f9de580357d3604ebca6b3a7ea5fec250912003c037421eb01869fcf2b15d1307602060043592a3016113c0565b73ffffffffffffffffffffffffffffffffffffffff9051165f5260016020526115ed60405f206109966fffffffffffffffffffffffffffffffff8716825460801c611d3f565b876113bd565b806116588a73ffffffffffffffffffffffffffffffffffffffff61163f6114cf858e9f9e6fffffffffffffffffffffffffffffffff8f9160019a8f61163792611c34565b351695611c34565b165f528360205261099660405f2091825460801c611d3f565b01979697611390565b969390989794919a99959273ffffffffffffffffffffffffffffffffffffffff61168f6114cf8e8688611c34565b9a1673ffffffffffffffffffffffffffffffffffffffff8b1611156117ac5789975b8981108c828c8e84611778575b50505050156116d5576116d090611cff565b6116b1565b919497929598999b9093969b8a8c848281109283611745575b505050611703575060010191909a999a61131c565b73ffffffffffffffffffffffffffffffffffffffff907f1e198233000000000000000000000000000000000000000000000000000000005f521660045260245ffd5b73ffffffffffffffffffffffffffffffffffffffff92935061176e916114cf9184871695611c34565b16148c848d6116ee565b73ffffffffffffffffffffffffffffffffffffffff939450916114cf91846117a1941695611c34565b16108c828c8e6116be565b8b7f30b543ad000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b87907f6a215984000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b877f666f7b84000000000000000000000000000000000000000000000000000000005f5260045260245260445ffd5b61187373ffffffffffffffffffffffffffffffffffffffff9f939273ffffffffffffffffffffffffffffffffffffffff926114cf918791611c34565b9e8f9216911611156119bb57908f93929161189c906118958f8f859198611c34565b3590611c92565b9c6118a8828489611c9f565b90506118bd575b506001019091928d8f611291565b6118ee73ffffffffffffffffffffffffffffffffffffffff6118e384868b9c969c611c9f565b848316939188612089565b160361198f5773ffffffffffffffffffffffffffffffffffffffff81165f5260016020526fffffffffffffffffffffffffffffffff60405f2054169086821061194557505061193e600191611cff565b96906118af565b9073ffffffffffffffffffffffffffffffffffffffff87927f4ae8d794000000000000000000000000000000000000000000000000000000005f521660045260245260445260645ffd5b877fa1c97319000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b507f85f69001000000000000000000000000000000000000000000000000000000005f5260045260245ffd5b887f67c16401000000000000000000000000000000000000000000000000000000005f5260045261010060245260445ffd5b506101008511611247565b7fff633a38000000000000000000000000000000000000000000000000000000005f5260045ffd5b5088881415611237565b5088871415611230565b7ff74e6104000000000000000000000000000000000000000000000000000000005f5260043560045260245ffd5b7ff452a844000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b7f769050df000000000000000000000000000000000000000000000000000000005f5260043560045260245260445ffd5b9181601f840112156101af5782359167ffffffffffffffff83116101af576020808501948460051b0101116101af57565b6004359073ffffffffffffffffffffffffffffffffffffffff821682036101af57565b359073ffffffffffffffffffffffffffffffffffffffff821682036101af57565b60a0810190811067ffffffffffffffff821117610b2857604052565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff821117610b2857604052565b90604051611bcf81611b65565b608060018294805473ffffffffffffffffffffffffffffffffffffffff8116855260a01c6020850152015479ffffffffffffffffffffffffffffffffffffffffffffffffffff8116604084015264ffffffffff8160d01c16606084015260f81c910152565b9190811015611c445760051b0190565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52603260045260245ffd5b3573ffffffffffffffffffffffffffffffffffffffff811681036101af5790565b91908201809211610ed057565b9190811015611c445760051b810135907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe1813603018212156101af57019081359167ffffffffffffffff83116101af5760200182360381136101af579190565b7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff8114610ed05760010190565b81810292918115918404141715610ed057565b906fffffffffffffffffffffffffffffffff809116911601906fffffffffffffffffffffffffffffffff8211610ed057565b3d15611dc9573d9067ffffffffffffffff8211610b285760405191611dbe60207fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f8401160184611b81565b82523d5f602084013e565b606090565b905f5b818110611dde5750505090565b90919260208060019273ffffffffffffffffffffffffffffffffffffffff611e0588611b44565b168152019401929101611dd1565b989293611e63611e3791999796929998939860405192839160208301958691611dce565b037fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe08101835282611b81565b5190209360405160208101907f07ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff84116101af57611eda602082611ef095611e379760051b80918737810103017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe08101835282611b81565b5190209560405192839160208301958691611dce565b519020936040519560208701977f289ec94153b8f2019af4b1c997515fe1e79e22cf4ae52e34d49e4c9b215f9235895260408801526060870152608086015260a085015260c084015260e08301526101008201526101008152611f5561012082611b81565b519020611f60611fac565b906040519060208201927f190100000000000000000000000000000000000000000000000000000000000084526022830152604282015260428152611fa6606282611b81565b51902090565b7f000000000000000000000000000000000000000000000000000000000000000046146120655760405160208101907f8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f82527f7db6e4bfdda2c336fbd01808c3bd3350ea4873abff3ea93dfcb9f15b02aab08160408201527fc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc660608201524660808201523060a082015260a08152611fa660c082611b81565b7f000000000000000000000000000000000000000000000000000000000000000090565b6041830361213f57826020116101af57813591836040116101af5760208101359360401015611c44576040013560f81c907f7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a084118015612128575b612120576020935f93608093604051938452868401526040830152606082015282805260015afa15612115575f5190565b6040513d5f823e3d90fd5b505050505f90565b50601b82141580156120e45750601c8214156120e4565b5050505f9056",
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

// PackMAXPAYEES is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5ecc86e8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function MAX_PAYEES() view returns(uint256)
func (escrow *Escrow) PackMAXPAYEES() []byte {
	enc, err := escrow.abi.Pack("MAX_PAYEES")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackMAXPAYEES is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5ecc86e8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function MAX_PAYEES() view returns(uint256)
func (escrow *Escrow) TryPackMAXPAYEES() ([]byte, error) {
	return escrow.abi.Pack("MAX_PAYEES")
}

// UnpackMAXPAYEES is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5ecc86e8.
//
// Solidity: function MAX_PAYEES() view returns(uint256)
func (escrow *Escrow) UnpackMAXPAYEES(data []byte) (*big.Int, error) {
	out, err := escrow.abi.Unpack("MAX_PAYEES", data)
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
// Solidity: function abort(bytes32 jobId) returns()
func (escrow *Escrow) PackAbort(jobId [32]byte) []byte {
	enc, err := escrow.abi.Pack("abort", jobId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAbort is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x09d6ce0e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function abort(bytes32 jobId) returns()
func (escrow *Escrow) TryPackAbort(jobId [32]byte) ([]byte, error) {
	return escrow.abi.Pack("abort", jobId)
}

// PackCreateJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xce01288a.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) payable returns()
func (escrow *Escrow) PackCreateJob(jobId [32]byte, seedCommitment [32]byte, deadline uint64) []byte {
	enc, err := escrow.abi.Pack("createJob", jobId, seedCommitment, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCreateJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xce01288a.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function createJob(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) payable returns()
func (escrow *Escrow) TryPackCreateJob(jobId [32]byte, seedCommitment [32]byte, deadline uint64) ([]byte, error) {
	return escrow.abi.Pack("createJob", jobId, seedCommitment, deadline)
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
// Solidity: function getJob(bytes32 jobId) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock)
func (escrow *Escrow) PackGetJob(jobId [32]byte) []byte {
	enc, err := escrow.abi.Pack("getJob", jobId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetJob is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf729cf0d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getJob(bytes32 jobId) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock)
func (escrow *Escrow) TryPackGetJob(jobId [32]byte) ([]byte, error) {
	return escrow.abi.Pack("getJob", jobId)
}

// GetJobOutput serves as a container for the return parameters of contract
// method GetJob.
type GetJobOutput struct {
	Creator       common.Address
	Amount        *big.Int
	Deadline      uint64
	State         uint8
	ClosedAtBlock *big.Int
}

// UnpackGetJob is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf729cf0d.
//
// Solidity: function getJob(bytes32 jobId) view returns(address creator, uint256 amount, uint64 deadline, uint8 state, uint256 closedAtBlock)
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
	return *outstruct, nil
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
// Solidity: function refund(bytes32 jobId) returns()
func (escrow *Escrow) PackRefund(jobId [32]byte) []byte {
	enc, err := escrow.abi.Pack("refund", jobId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRefund is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7249fbb6.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function refund(bytes32 jobId) returns()
func (escrow *Escrow) TryPackRefund(jobId [32]byte) ([]byte, error) {
	return escrow.abi.Pack("refund", jobId)
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
// the contract method with ID 0x0684fe09.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settle(bytes32 jobId, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits, bytes[] signatures) returns()
func (escrow *Escrow) PackSettle(jobId [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address, signatures [][]byte) []byte {
	enc, err := escrow.abi.Pack("settle", jobId, seed, resultRoot, verifierHash, payees, amounts, culprits, signatures)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettle is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0684fe09.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settle(bytes32 jobId, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits, bytes[] signatures) returns()
func (escrow *Escrow) TryPackSettle(jobId [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address, signatures [][]byte) ([]byte, error) {
	return escrow.abi.Pack("settle", jobId, seed, resultRoot, verifierHash, payees, amounts, culprits, signatures)
}

// PackSettlementDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7e57bb5d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function settlementDigest(bytes32 jobId, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
func (escrow *Escrow) PackSettlementDigest(jobId [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address) []byte {
	enc, err := escrow.abi.Pack("settlementDigest", jobId, seed, resultRoot, verifierHash, payees, amounts, culprits)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSettlementDigest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7e57bb5d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function settlementDigest(bytes32 jobId, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
func (escrow *Escrow) TryPackSettlementDigest(jobId [32]byte, seed [32]byte, resultRoot [32]byte, verifierHash [32]byte, payees []common.Address, amounts []*big.Int, culprits []common.Address) ([]byte, error) {
	return escrow.abi.Pack("settlementDigest", jobId, seed, resultRoot, verifierHash, payees, amounts, culprits)
}

// UnpackSettlementDigest is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7e57bb5d.
//
// Solidity: function settlementDigest(bytes32 jobId, bytes32 seed, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, address[] culprits) view returns(bytes32)
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
	JobId        [32]byte
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
// Solidity: event EscrowReleased(bytes32 indexed jobId, bytes32 resultRoot, bytes32 verifierHash, address[] payees, uint256[] amounts, uint256 refund)
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
	JobId   [32]byte
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
// Solidity: event JobAborted(bytes32 indexed jobId, address indexed creator, uint256 amount)
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
	JobId          [32]byte
	Creator        common.Address
	Amount         *big.Int
	SeedCommitment [32]byte
	Deadline       uint64
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
// Solidity: event JobCreated(bytes32 indexed jobId, address indexed creator, uint256 amount, bytes32 seedCommitment, uint64 deadline)
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

// EscrowRefunded represents a Refunded event raised by the Escrow contract.
type EscrowRefunded struct {
	JobId   [32]byte
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
// Solidity: event Refunded(bytes32 indexed jobId, address indexed creator, uint256 amount)
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
	JobId   [32]byte
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
// Solidity: event Slashed(bytes32 indexed jobId, address indexed culprit, uint256 amount)
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
	if bytes.Equal(raw[:4], escrow.abi.Errors["LengthMismatch"].ID.Bytes()[:4]) {
		return escrow.UnpackLengthMismatchError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["NotCreator"].ID.Bytes()[:4]) {
		return escrow.UnpackNotCreatorError(raw[4:])
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
	if bytes.Equal(raw[:4], escrow.abi.Errors["StakeLocked"].ID.Bytes()[:4]) {
		return escrow.UnpackStakeLockedError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TooManyPayees"].ID.Bytes()[:4]) {
		return escrow.UnpackTooManyPayeesError(raw[4:])
	}
	if bytes.Equal(raw[:4], escrow.abi.Errors["TransferFailed"].ID.Bytes()[:4]) {
		return escrow.UnpackTransferFailedError(raw[4:])
	}
	return nil, errors.New("Unknown error")
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

// EscrowBadSeed represents a BadSeed error raised by the Escrow contract.
type EscrowBadSeed struct {
	JobId [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error BadSeed(bytes32 jobId)
func EscrowBadSeedErrorID() common.Hash {
	return common.HexToHash("0xf74e6104e3d6cf44d00f40ed490714cb968fe373257b4ff7e705546daf6782a7")
}

// UnpackBadSeedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error BadSeed(bytes32 jobId)
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
	JobId    [32]byte
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error DeadlineNotReached(bytes32 jobId, uint256 deadline)
func EscrowDeadlineNotReachedErrorID() common.Hash {
	return common.HexToHash("0xf1496019b28acc07b9987c8f8da71eb6bdbd97b62b91a9520291b392bc8b9445")
}

// UnpackDeadlineNotReachedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error DeadlineNotReached(bytes32 jobId, uint256 deadline)
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
	JobId [32]byte
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobExists(bytes32 jobId)
func EscrowJobExistsErrorID() common.Hash {
	return common.HexToHash("0x9e2b4bfd54f0778ae5b46dc678017f9ac3f783c5abec883f886f9464cfd3e050")
}

// UnpackJobExistsError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobExists(bytes32 jobId)
func (escrow *Escrow) UnpackJobExistsError(raw []byte) (*EscrowJobExists, error) {
	out := new(EscrowJobExists)
	if err := escrow.abi.UnpackIntoInterface(out, "JobExists", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJobExpired represents a JobExpired error raised by the Escrow contract.
type EscrowJobExpired struct {
	JobId    [32]byte
	Deadline *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobExpired(bytes32 jobId, uint256 deadline)
func EscrowJobExpiredErrorID() common.Hash {
	return common.HexToHash("0xf452a84463ea8e1a7ac0a64252cf600ce6a20fbddac033c8fddc0a60672cff53")
}

// UnpackJobExpiredError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobExpired(bytes32 jobId, uint256 deadline)
func (escrow *Escrow) UnpackJobExpiredError(raw []byte) (*EscrowJobExpired, error) {
	out := new(EscrowJobExpired)
	if err := escrow.abi.UnpackIntoInterface(out, "JobExpired", raw); err != nil {
		return nil, err
	}
	return out, nil
}

// EscrowJobNotFunded represents a JobNotFunded error raised by the Escrow contract.
type EscrowJobNotFunded struct {
	JobId [32]byte
	State uint8
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error JobNotFunded(bytes32 jobId, uint8 state)
func EscrowJobNotFundedErrorID() common.Hash {
	return common.HexToHash("0x769050df8b37347648dbb8c3af6b0c16cd656374df20ab7b0d4af7e9ad35ea42")
}

// UnpackJobNotFundedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error JobNotFunded(bytes32 jobId, uint8 state)
func (escrow *Escrow) UnpackJobNotFundedError(raw []byte) (*EscrowJobNotFunded, error) {
	out := new(EscrowJobNotFunded)
	if err := escrow.abi.UnpackIntoInterface(out, "JobNotFunded", raw); err != nil {
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
	Payees     *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error QuorumNotReached(uint256 signatures, uint256 payees)
func EscrowQuorumNotReachedErrorID() common.Hash {
	return common.HexToHash("0x6a2159843653f10db54c042cb44fca2acd5ab362e9d6b07cb6ba038cc88440ed")
}

// UnpackQuorumNotReachedError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error QuorumNotReached(uint256 signatures, uint256 payees)
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

// EscrowTooManyPayees represents a TooManyPayees error raised by the Escrow contract.
type EscrowTooManyPayees struct {
	Count *big.Int
	Max   *big.Int
}

// ErrorID returns the hash of canonical representation of the error's signature.
//
// Solidity: error TooManyPayees(uint256 count, uint256 max)
func EscrowTooManyPayeesErrorID() common.Hash {
	return common.HexToHash("0x67c16401cd0799ab13f2b4352df7c6cd8a5b64abaea7ec9526bd8f09da1d0c39")
}

// UnpackTooManyPayeesError is the Go binding used to decode the provided
// error data into the corresponding Go error struct.
//
// Solidity: error TooManyPayees(uint256 count, uint256 max)
func (escrow *Escrow) UnpackTooManyPayeesError(raw []byte) (*EscrowTooManyPayees, error) {
	out := new(EscrowTooManyPayees)
	if err := escrow.abi.UnpackIntoInterface(out, "TooManyPayees", raw); err != nil {
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
