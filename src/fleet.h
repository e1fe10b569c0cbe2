/*
 * fleet.h: the server side of kbench agents (src/fleet.c).
 */
#ifndef KI_FLEET_H
#define KI_FLEET_H

extern int	ki_agent_lease_s;

/* The GUC kernelindex.agent_lease (from _PG_init). */
void		ki_fleet_init(void);

/* Does the installed SQL have agents (0.2.0; not yet updated from 0.1.0)? */
bool		ki_fleet_installed(void);

/* The agent device a job's device reaches, or NULL (not connected to SPI). */
char	   *ki_agent_route(const char *device);

#endif							/* KI_FLEET_H */
