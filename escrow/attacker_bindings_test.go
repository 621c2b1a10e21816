// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package escrow

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

// ReentrantWithdrawerMetaData contains all meta data concerning the ReentrantWithdrawer contract.
var ReentrantWithdrawerMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"contractIEscrow\",\"name\":\"escrow_\",\"type\":\"address\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[],\"name\":\"attackWithdraw\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"attackWithdrawStake\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"attempts\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"bytes32\",\"name\":\"jobId\",\"type\":\"bytes32\"},{\"internalType\":\"bytes32\",\"name\":\"seedCommitment\",\"type\":\"bytes32\"},{\"internalType\":\"uint64\",\"name\":\"deadline\",\"type\":\"uint64\"}],\"name\":\"createAndAbort\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"escrow\",\"outputs\":[{\"internalType\":\"contractIEscrow\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"lastRevert\",\"outputs\":[{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"reentries\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"stakeAndRequest\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"stateMutability\":\"payable\",\"type\":\"receive\"}]",
	ID:  "ReentrantWithdrawer",
	Bin: "0x60a03461009257601f610d5b38819003918201601f19168301916001600160401b038311848410176100965780849260209460405283398101031261009257516001600160a01b038116810361009257608052604051610cb090816100ab823960805181818160b00152818160fb01528181610229015281816103f60152818161064f015281816108930152610ad90152f35b5f80fd5b634e487b7160e01b5f52604160045260245ffdfe6080806040526004361015610024575b50361561001a575f80fd5b610022610851565b005b5f905f3560e01c908163379f2b22146105fb575080635754a042146105dd5780636578986d146105c05780636a540a3e1461049a57806373408895146103a25780638ad87bce146101eb578063bc42d94c146100d75763e2fdcc170361000f57346100d457806003193601126100d457602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b80fd5b50806003193601126100d4578073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156101c8576040517f3a4b66f1000000000000000000000000000000000000000000000000000000008152828160048134865af19081156101e05783916101cb575b5050803b156101c8578180916024604051809481937f230957210000000000000000000000000000000000000000000000000000000083523460048401525af180156101bd576101ac5750f35b816101b69161074b565b6100d45780f35b6040513d84823e3d90fd5b50fd5b816101d59161074b565b6101c857815f61015f565b6040513d85823e3d90fd5b5060606003193601126100d457806004356044359067ffffffffffffffff82168092036103475773ffffffffffffffffffffffffffffffffffffffff7f00000000000000000000000000000000000000000000000000000000000000001691823b1561039d57604051907f4f47972c0000000000000000000000000000000000000000000000000000000082528260048301526024356024830152604482015283606482015260016084820152838160a48134875af190811561039257849161037d575b5050604051907f6461d4410000000000000000000000000000000000000000000000000000000082523060048301526024820152602081604481855afa9081156101e057839161034b575b50813b156103475782916024839260405194859384927f09d6ce0e00000000000000000000000000000000000000000000000000000000845260048401525af180156101bd576101ac5750f35b5050fd5b90506020813d602011610375575b816103666020938361074b565b8101031261034757515f6102fa565b3d9150610359565b816103879161074b565b61034757825f6102af565b6040513d86823e3d90fd5b505050fd5b50346100d457806003193601126100d45760017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0060035416176003558073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156101c8578180916004604051809481937f3ccfd60b0000000000000000000000000000000000000000000000000000000083525af180156101bd57610485575b507fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff006003541660035580f35b8161048f9161074b565b6100d457805f610459565b50346100d457806003193601126100d457604051600254826104bb826106fa565b8084526020840192600181169081156105885750600114610530575b50601f839261050b6040957fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe094038561074b565b8451958694602086525180928160208801528787015e85828601015201168101030190f35b600285528491507f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace5b81831061056e5750508201602001601f6104d7565b600181602092949394548385890101520191019190610559565b7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0016845250151560051b83016020019050601f6104d7565b50346100d457806003193601126100d45760209054604051908152f35b50346100d457806003193601126100d4576020600154604051908152f35b9050346106f6575f6003193601126106f65760027fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff00600354161760035573ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156106f657816004815f80947fbed9d8610000000000000000000000000000000000000000000000000000000083525af180156106eb576106d857507fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff006003541660035580f35b6106e491505f9061074b565b5f5f610459565b6040513d5f823e3d90fd5b5f80fd5b90600182811c92168015610741575b602083101461071457565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52602260045260245ffd5b91607f1691610709565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff82111761078c57604052565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b5f1981146107c75760010190565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b3d1561084c573d9067ffffffffffffffff821161078c576040519161084160207fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f840116018461074b565b82523d5f602084013e565b606090565b6003549060ff5f921680158015610ca3575b610c9e5760019061087482546107b9565b825503610ac2578173ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b15610abe578180916004604051809581937f3ccfd60b0000000000000000000000000000000000000000000000000000000083525af19182610aa5575b5050610a96576109006107f4565b9182519067ffffffffffffffff8211610a695761091e6002546106fa565b601f81116109fa575b50602090601f8311600114610960579382939492610955575b50505f198260011b9260031b1c191617600255565b015190505f80610940565b907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0831694600283527f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace925b8681106109e257508360019596106109ca575b505050811b01600255565b01515f1960f88460031b161c191690555f80806109bf565b919260206001819286850151815501940192016109ac565b828111156109275760028252601f830160051c9060208410610a61575b601f82910160051c0390825b828110610a31575050610927565b80847f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace6001938501015501610a23565b829150610a17565b807f4e487b7100000000000000000000000000000000000000000000000000000000602492526041600452fd5b90610aa181546107b9565b9055565b81610aaf9161074b565b610aba57825f6108f2565b8280fd5b5080fd5b73ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156106f6575f80916004604051809481937fbed9d8610000000000000000000000000000000000000000000000000000000083525af19081610c89575b50610a9657610b456107f4565b9182519067ffffffffffffffff8211610a6957610b636002546106fa565b601f8111610c1a575b50602090601f8311600114610b995793829394926109555750505f198260011b9260031b1c191617600255565b907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0831694600283527f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace925b868110610c0257508360019596106109ca57505050811b01600255565b91926020600181928685015181550194019201610be5565b82811115610b6c5760028252601f830160051c9060208410610c81575b601f82910160051c0390825b828110610c51575050610b6c565b80847f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace6001938501015501610c43565b829150610c37565b610c969193505f9061074b565b5f915f610b38565b509050565b506003600154101561086356",
}

// ReentrantWithdrawer is an auto generated Go binding around an Ethereum contract.
type ReentrantWithdrawer struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ReentrantWithdrawer) GetABI() abi.ABI {
	return c.abi
}

// NewReentrantWithdrawer creates a new instance of ReentrantWithdrawer.
func NewReentrantWithdrawer() *ReentrantWithdrawer {
	parsed, err := ReentrantWithdrawerMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ReentrantWithdrawer{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ReentrantWithdrawer) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(address escrow_) returns()
func (reentrantWithdrawer *ReentrantWithdrawer) PackConstructor(escrow_ common.Address) []byte {
	enc, err := reentrantWithdrawer.abi.Pack("", escrow_)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackAttackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x73408895.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function attackWithdraw() returns()
func (reentrantWithdrawer *ReentrantWithdrawer) PackAttackWithdraw() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("attackWithdraw")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAttackWithdraw is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x73408895.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function attackWithdraw() returns()
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackAttackWithdraw() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("attackWithdraw")
}

// PackAttackWithdrawStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x379f2b22.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function attackWithdrawStake() returns()
func (reentrantWithdrawer *ReentrantWithdrawer) PackAttackWithdrawStake() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("attackWithdrawStake")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAttackWithdrawStake is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x379f2b22.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function attackWithdrawStake() returns()
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackAttackWithdrawStake() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("attackWithdrawStake")
}

// PackAttempts is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5754a042.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function attempts() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) PackAttempts() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("attempts")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackAttempts is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x5754a042.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function attempts() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackAttempts() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("attempts")
}

// UnpackAttempts is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x5754a042.
//
// Solidity: function attempts() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) UnpackAttempts(data []byte) (*big.Int, error) {
	out, err := reentrantWithdrawer.abi.Unpack("attempts", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackCreateAndAbort is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8ad87bce.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function createAndAbort(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) payable returns()
func (reentrantWithdrawer *ReentrantWithdrawer) PackCreateAndAbort(jobId [32]byte, seedCommitment [32]byte, deadline uint64) []byte {
	enc, err := reentrantWithdrawer.abi.Pack("createAndAbort", jobId, seedCommitment, deadline)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackCreateAndAbort is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8ad87bce.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function createAndAbort(bytes32 jobId, bytes32 seedCommitment, uint64 deadline) payable returns()
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackCreateAndAbort(jobId [32]byte, seedCommitment [32]byte, deadline uint64) ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("createAndAbort", jobId, seedCommitment, deadline)
}

// PackEscrow is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe2fdcc17.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function escrow() view returns(address)
func (reentrantWithdrawer *ReentrantWithdrawer) PackEscrow() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("escrow")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackEscrow is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xe2fdcc17.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function escrow() view returns(address)
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackEscrow() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("escrow")
}

// UnpackEscrow is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xe2fdcc17.
//
// Solidity: function escrow() view returns(address)
func (reentrantWithdrawer *ReentrantWithdrawer) UnpackEscrow(data []byte) (common.Address, error) {
	out, err := reentrantWithdrawer.abi.Unpack("escrow", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackLastRevert is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6a540a3e.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function lastRevert() view returns(bytes)
func (reentrantWithdrawer *ReentrantWithdrawer) PackLastRevert() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("lastRevert")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackLastRevert is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6a540a3e.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function lastRevert() view returns(bytes)
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackLastRevert() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("lastRevert")
}

// UnpackLastRevert is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6a540a3e.
//
// Solidity: function lastRevert() view returns(bytes)
func (reentrantWithdrawer *ReentrantWithdrawer) UnpackLastRevert(data []byte) ([]byte, error) {
	out, err := reentrantWithdrawer.abi.Unpack("lastRevert", data)
	if err != nil {
		return *new([]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([]byte)).(*[]byte)
	return out0, nil
}

// PackReentries is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6578986d.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function reentries() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) PackReentries() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("reentries")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReentries is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x6578986d.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function reentries() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackReentries() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("reentries")
}

// UnpackReentries is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x6578986d.
//
// Solidity: function reentries() view returns(uint256)
func (reentrantWithdrawer *ReentrantWithdrawer) UnpackReentries(data []byte) (*big.Int, error) {
	out, err := reentrantWithdrawer.abi.Unpack("reentries", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackStakeAndRequest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc42d94c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function stakeAndRequest() payable returns()
func (reentrantWithdrawer *ReentrantWithdrawer) PackStakeAndRequest() []byte {
	enc, err := reentrantWithdrawer.abi.Pack("stakeAndRequest")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackStakeAndRequest is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc42d94c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function stakeAndRequest() payable returns()
func (reentrantWithdrawer *ReentrantWithdrawer) TryPackStakeAndRequest() ([]byte, error) {
	return reentrantWithdrawer.abi.Pack("stakeAndRequest")
}
