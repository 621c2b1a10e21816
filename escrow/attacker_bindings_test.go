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
	Bin: "0x60a03461009257601f610cd238819003918201601f19168301916001600160401b038311848410176100965780849260209460405283398101031261009257516001600160a01b038116810361009257608052604051610c2790816100ab823960805181818160b00152818160fb015281816102290152818161036d015281816105c60152818161080a0152610a500152f35b5f80fd5b634e487b7160e01b5f52604160045260245ffdfe6080806040526004361015610024575b50361561001a575f80fd5b6100226107c8565b005b5f905f3560e01c908163379f2b2214610572575080635754a042146105545780636578986d146105375780636a540a3e1461041157806373408895146103195780638ad87bce146101eb578063bc42d94c146100d75763e2fdcc170361000f57346100d457806003193601126100d457602060405173ffffffffffffffffffffffffffffffffffffffff7f0000000000000000000000000000000000000000000000000000000000000000168152f35b80fd5b50806003193601126100d4578073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156101c8576040517f3a4b66f1000000000000000000000000000000000000000000000000000000008152828160048134865af19081156101e05783916101cb575b5050803b156101c8578180916024604051809481937f230957210000000000000000000000000000000000000000000000000000000083523460048401525af180156101bd576101ac5750f35b816101b6916106c2565b6100d45780f35b6040513d84823e3d90fd5b50fd5b816101d5916106c2565b6101c857815f61015f565b6040513d85823e3d90fd5b5060606003193601126100d457806004356044359067ffffffffffffffff82168092036102f05773ffffffffffffffffffffffffffffffffffffffff7f00000000000000000000000000000000000000000000000000000000000000001691823b1561031457604051907fce01288a00000000000000000000000000000000000000000000000000000000825282600483015260243560248301526044820152838160648134875af19081156103095784916102f4575b5050813b156102f05782916024839260405194859384927f09d6ce0e00000000000000000000000000000000000000000000000000000000845260048401525af180156101bd576101ac5750f35b5050fd5b816102fe916106c2565b6102f057825f6102a2565b6040513d86823e3d90fd5b505050fd5b50346100d457806003193601126100d45760017fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0060035416176003558073ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b156101c8578180916004604051809481937f3ccfd60b0000000000000000000000000000000000000000000000000000000083525af180156101bd576103fc575b507fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff006003541660035580f35b81610406916106c2565b6100d457805f6103d0565b50346100d457806003193601126100d4576040516002548261043282610671565b8084526020840192600181169081156104ff57506001146104a7575b50601f83926104826040957fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe09403856106c2565b8451958694602086525180928160208801528787015e85828601015201168101030190f35b600285528491507f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace5b8183106104e55750508201602001601f61044e565b6001816020929493945483858901015201910191906104d0565b7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0016845250151560051b83016020019050601f61044e565b50346100d457806003193601126100d45760209054604051908152f35b50346100d457806003193601126100d4576020600154604051908152f35b90503461066d575f60031936011261066d5760027fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff00600354161760035573ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b1561066d57816004815f80947fbed9d8610000000000000000000000000000000000000000000000000000000083525af180156106625761064f57507fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff006003541660035580f35b61065b91505f906106c2565b5f5f6103d0565b6040513d5f823e3d90fd5b5f80fd5b90600182811c921680156106b8575b602083101461068b57565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52602260045260245ffd5b91607f1691610680565b90601f7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0910116810190811067ffffffffffffffff82111761070357604052565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52604160045260245ffd5b5f19811461073e5760010190565b7f4e487b71000000000000000000000000000000000000000000000000000000005f52601160045260245ffd5b3d156107c3573d9067ffffffffffffffff821161070357604051916107b860207fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0601f84011601846106c2565b82523d5f602084013e565b606090565b6003549060ff5f921680158015610c1a575b610c15576001906107eb8254610730565b825503610a39578173ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b15610a35578180916004604051809581937f3ccfd60b0000000000000000000000000000000000000000000000000000000083525af19182610a1c575b5050610a0d5761087761076b565b9182519067ffffffffffffffff82116109e057610895600254610671565b601f8111610971575b50602090601f83116001146108d75793829394926108cc575b50505f198260011b9260031b1c191617600255565b015190505f806108b7565b907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0831694600283527f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace925b8681106109595750836001959610610941575b505050811b01600255565b01515f1960f88460031b161c191690555f8080610936565b91926020600181928685015181550194019201610923565b8281111561089e5760028252601f830160051c90602084106109d8575b601f82910160051c0390825b8281106109a857505061089e565b80847f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace600193850101550161099a565b82915061098e565b807f4e487b7100000000000000000000000000000000000000000000000000000000602492526041600452fd5b90610a188154610730565b9055565b81610a26916106c2565b610a3157825f610869565b8280fd5b5080fd5b73ffffffffffffffffffffffffffffffffffffffff7f000000000000000000000000000000000000000000000000000000000000000016803b1561066d575f80916004604051809481937fbed9d8610000000000000000000000000000000000000000000000000000000083525af19081610c00575b50610a0d57610abc61076b565b9182519067ffffffffffffffff82116109e057610ada600254610671565b601f8111610b91575b50602090601f8311600114610b105793829394926108cc5750505f198260011b9260031b1c191617600255565b907fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe0831694600283527f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace925b868110610b79575083600195961061094157505050811b01600255565b91926020600181928685015181550194019201610b5c565b82811115610ae35760028252601f830160051c9060208410610bf8575b601f82910160051c0390825b828110610bc8575050610ae3565b80847f405787fa12a823e0f2b7631cc41b3ba8828b3321ca811111fa75cd3aa3bb5ace6001938501015501610bba565b829150610bae565b610c0d9193505f906106c2565b5f915f610aaf565b509050565b50600360015410156107da56",
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
