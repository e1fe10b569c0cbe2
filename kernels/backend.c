/*
 * backend.c: the one place a run chooses its backend (kb_int.h, "backends"):
 * another implementation runs in a child process (backend_child.c), kbench's
 * own on the case's device, cuda (backend_cuda.c) or cpu (backend_cpu.c).
 */
#include "kb_int.h"

int
kb_be_open(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes)
{
	int			rc;

	if (cs->ext != KB_EXT_NONE)
		rc = kb_be_open_child(be, cs, req, flush_bytes);
	else if (cs->cuda)
		rc = kb_be_open_cuda(be, cs->device);
	else
	{
		kb_be_open_cpu(be);
		be->device = cs->device;
		rc = KBC_OK;
	}
	be->req = req;				/* after the backend's open, which clears be */
	return rc;
}
