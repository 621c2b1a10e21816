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

// Check tells, before a job is published, whether code can run in the
// sandbox: a WebAssembly binary (magic and version), that compiles, with a
// _start export taking and returning nothing, and importing only the
// functions of wasi_snapshot_preview1 that the Executor instantiates, each
// with the signature it has there. A module that fails here fails every run
// on every processor, so a submitter learns it at once instead of from the
// processors' logs. Each error wraps ErrInvalidModule and reads on its own
// ("not a WebAssembly module (bad magic)").
func Check(ctx context.Context, code []byte) error {
	if len(code) > DefaultConfig().MaxModuleBytes {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrInvalidModule, len(code), DefaultConfig().MaxModuleBytes)
	}
	if len(code) < 8 || !bytes.Equal(code[:4], wasmMagic) {
		return fmt.Errorf("%w: not a WebAssembly module (bad magic)", ErrInvalidModule)
	}
	if v := binary.LittleEndian.Uint32(code[4:8]); v != wasmVersion {
		return fmt.Errorf("%w: WebAssembly binary version %d, want %d", ErrInvalidModule, v, wasmVersion)
	}
	// The interpreter only decodes and validates here: nothing runs.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fmt.Errorf("wasm: instantiate WASI: %w", err)
	}
	cm, err := rt.CompileModule(ctx, code)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidModule, err)
	}
	if err := checkStart(cm); err != nil {
		return err
	}
	return checkImports(cm, rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions())
}

// checkStart checks the WASI command entry point the Executor calls.
func checkStart(cm wazero.CompiledModule) error {
	entry, ok := cm.ExportedFunctions()["_start"]
	if !ok {
		return fmt.Errorf("%w: no _start export (not a WASI command)", ErrInvalidModule)
	}
	if len(entry.ParamTypes()) != 0 || len(entry.ResultTypes()) != 0 {
		return fmt.Errorf("%w: _start must take and return nothing", ErrInvalidModule)
	}
	return nil
}

// checkImports refuses imports the sandbox does not provide: any memory,
// table or global, and any function that is not one of provided (by name)
// with its signature.
func checkImports(cm wazero.CompiledModule, provided map[string]api.FunctionDefinition) error {
	if len(cm.ImportedMemories()) > 0 {
		mod, name, _ := cm.ImportedMemories()[0].Import()
		return fmt.Errorf("%w: imports memory %s.%s; the sandbox provides none (the module must define its memory)", ErrInvalidModule, mod, name)
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		have, ok := provided[name]
		if mod != wasi_snapshot_preview1.ModuleName || !ok {
			return fmt.Errorf("%w: imports %s.%s, which the sandbox does not provide (only %s functions)",
				ErrInvalidModule, mod, name, wasi_snapshot_preview1.ModuleName)
		}
		if !slices.Equal(f.ParamTypes(), have.ParamTypes()) || !slices.Equal(f.ResultTypes(), have.ResultTypes()) {
			return fmt.Errorf("%w: imports %s.%s with a signature unlike the sandbox's", ErrInvalidModule, mod, name)
		}
	}
	return nil
}
