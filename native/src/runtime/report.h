/* The run report (report.c): every rank's phases and the modules' sections,
 * merged on rank 0 and written once. */
#ifndef IOTUNER_REPORT_H
#define IOTUNER_REPORT_H

/* Collective on the run's communicator in an MPI run; at exit in a serial process. */
void iot_report_write(void);

#endif
