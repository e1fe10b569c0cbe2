/*
 * fleet.h: the server side of kbench agents (src/fleet.c).
 */
#ifndef KI_FLEET_H
#define KI_FLEET_H

extern int	ki_agent_lease_s;
extern int	ki_agent_devices_per_role;
extern int	ki_agent_devices;

/* The job whose run this backend stores now (0: none; reset at the transaction's end). */
void		ki_set_storing_job(int64 job);

/* The GUC kernelindex.agent_lease (from _PG_init). */
void		ki_fleet_init(void);

/* The agent device a job's device reaches, or NULL (not connected to SPI). */
char	   *ki_agent_route(const char *device);
char	   *ki_agent_served(void);

#endif							/* KI_FLEET_H */
