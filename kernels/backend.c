/*
 * backend.c: the one place a run chooses its backend (kb_int.h, "backends"):
 * another implementation runs in a child process (backend_child.c), kbench's
 * own on the case's device, cuda (backend_cuda.c) or cpu (backend_cpu.c).
 */
#include "kb_int.h"

int
kb_be_open(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes)
{
	if (cs->ext != KB_EXT_NONE)
		return kb_be_open_child(be, cs, req, flush_bytes);
	if (cs->cuda)
		return kb_be_open_cuda(be, cs->device);
	kb_be_open_cpu(be);
	be->device = cs->device;
	return KBC_OK;
}
