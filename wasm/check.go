package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// wasmMagic and wasmVersion open every WebAssembly binary module.
var wasmMagic = []byte("\x00asm")

const wasmVersion = 1

// CheckError is why Check refused a module. It wraps ErrInvalidModule;
// Reason alone reads on its own after the module's name.
type CheckError struct {
	Reason string
}

func (e *CheckError) Error() string { return ErrInvalidModule.Error() + ": " + e.Reason }
func (e *CheckError) Unwrap() error { return ErrInvalidModule }

func refuse(format string, args ...any) error {
	return &CheckError{Reason: fmt.Sprintf(format, args...)}
}

// Check tells, before a job is published, whether code can run in the
// sandbox: a WebAssembly binary (magic and version), that compiles, with a
// _start export taking and returning nothing, and importing only the
// functions of wasi_snapshot_preview1 that the Executor instantiates, each
// with the signature it has there. A module that fails here fails every run
// on every processor, so a submitter learns it at once instead of from the
// processors' logs. A refusal is a *CheckError.
func Check(ctx context.Context, code []byte) error {
	if len(code) > DefaultConfig().MaxModuleBytes {
		return refuse("%d bytes, over the limit of %d", len(code), DefaultConfig().MaxModuleBytes)
	}
	if len(code) < 8 || !bytes.Equal(code[:4], wasmMagic) {
		return refuse("not a WebAssembly module (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(code[4:8]); v != wasmVersion {
		return refuse("WebAssembly binary version %d, want %d", v, wasmVersion)
	}
	// The interpreter only decodes and validates here: nothing runs.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("wasm: instantiate WASI: %w", err)
	}
	cm, err := rt.CompileModule(ctx, code)
	if err != nil {
		return refuse("%v", err)
	}
	if err := checkStart(cm); err != nil {
		return err
	}
	return checkImports(cm, rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions())
}

// checkStart checks the WASI command entry point the Executor calls; a
// refusal is a *CheckError.
func checkStart(cm wazero.CompiledModule) error {
	entry, ok := cm.ExportedFunctions()["_start"]
	if !ok {
		return refuse("no _start export (not a WASI command)")
	}
	if len(entry.ParamTypes()) != 0 || len(entry.ResultTypes()) != 0 {
		return refuse("_start must take and return nothing")
	}
	return nil
}

// checkImports refuses imports the sandbox does not provide: any memory,
// table or global, and any function that is not one of provided (by name)
// with its signature.
func checkImports(cm wazero.CompiledModule, provided map[string]api.FunctionDefinition) error {
	if len(cm.ImportedMemories()) > 0 {
		mod, name, _ := cm.ImportedMemories()[0].Import()
		return refuse("imports memory %s.%s; the sandbox provides none (the module must define its memory)", mod, name)
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		have, ok := provided[name]
		if mod != wasi_snapshot_preview1.ModuleName || !ok {
			return refuse("imports %s.%s, which the sandbox does not provide (only %s functions)",
				mod, name, wasi_snapshot_preview1.ModuleName)
		}
		if !slices.Equal(f.ParamTypes(), have.ParamTypes()) || !slices.Equal(f.ResultTypes(), have.ResultTypes()) {
			return refuse("imports %s.%s with a signature unlike the sandbox's", mod, name)
		}
	}
	return nil
}
