// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Two MPI ranks, each checking what it received: a ping-pong of growing
 * messages (every byte a function of rank, size and round), MPI_Allreduce
 * (sum and max over a vector) and MPI_Alltoall. Prints one "mpi_check:"
 * line a part and exits 1 when any result was wrong. Built with mpicc on
 * the host (selftests/vm/ucx_mpi.sh), run over pml ucx in the guest.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t pat(int rank, size_t size, int round, size_t i)
{
	return (uint8_t)(rank * 131 + size * 7 + round * 17 + i * 31 + (i >> 8));
}

static int pingpong(int rank, int peer, size_t max, int rounds)
{
	uint8_t *buf = malloc(max);
	int bad = 0;
	double t0, us;

	if (!buf)
		return 1;
	for (size_t size = 1; size <= max; size *= 4) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int r = 0; r < rounds && !bad; r++) {
			/* rank 0 sends first; each side checks what it got and
			 * answers with its own pattern */
			for (int turn = 0; turn < 2; turn++) {
				int sender = turn;	/* rank 0, then rank 1 */

				if (rank == sender) {
					for (size_t i = 0; i < size; i++)
						buf[i] = pat(rank, size, r, i);
					MPI_Send(buf, (int)size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
				} else {
					MPI_Status st;
					int n;

					memset(buf, 0, size);
					MPI_Recv(buf, (int)size, MPI_BYTE, peer, r, MPI_COMM_WORLD, &st);
					MPI_Get_count(&st, MPI_BYTE, &n);
					if ((size_t)n != size) {
						bad = 1;
						break;
					}
					for (size_t i = 0; i < size; i++)
						if (buf[i] != pat(peer, size, r, i)) {
							fprintf(stderr, "mpi_check: rank %d: size %zu round %d byte %zu: got %u want %u\n",
								rank, size, r, i, buf[i], pat(peer, size, r, i));
							bad = 1;
							break;
						}
				}
			}
		}
		us = (MPI_Wtime() - t0) * 1e6 / rounds / 2;
		if (rank == 0)
			printf("mpi_check: pingpong %zu bytes x %d: %s, %.1f us one way\n", size, rounds,
			       bad ? "WRONG" : "ok", us);
		if (bad)
			break;
	}
	free(buf);
	return bad;
}

static int allreduce(int rank, int size, int n)
{
	long *in = malloc(n * sizeof(long)), *sum = malloc(n * sizeof(long)),
	     *max = malloc(n * sizeof(long));
	int bad = 0;

	if (!in || !sum || !max)
		return 1;
	for (int i = 0; i < n; i++)
		in[i] = (long)(rank + 1) * (i + 3) - i % 7;
	MPI_Allreduce(in, sum, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(in, max, n, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
	for (int i = 0; i < n && !bad; i++) {
		long s = 0, m = 0;

		for (int r = 0; r < size; r++) {
			long v = (long)(r + 1) * (i + 3) - i % 7;

			s += v;
			m = r ? (v > m ? v : m) : v;
		}
		if (sum[i] != s || max[i] != m) {
			fprintf(stderr, "mpi_check: rank %d: allreduce[%d]: sum %ld want %ld, max %ld want %ld\n",
				rank, i, sum[i], s, max[i], m);
			bad = 1;
		}
	}
	if (rank == 0)
		printf("mpi_check: allreduce sum+max of %d longs: %s\n", n, bad ? "WRONG" : "ok");
	free(in);
	free(sum);
	free(max);
	return bad;
}

static int alltoall(int rank, int size, int n)
{
	int *out = malloc((size_t)n * size * sizeof(int)), *in = malloc((size_t)n * size * sizeof(int));
	int bad = 0;

	if (!out || !in)
		return 1;
	for (int d = 0; d < size; d++)
		for (int i = 0; i < n; i++)
			out[d * n + i] = rank * 1000003 + d * 7919 + i;
	MPI_Alltoall(out, n, MPI_INT, in, n, MPI_INT, MPI_COMM_WORLD);
	for (int s = 0; s < size && !bad; s++)
		for (int i = 0; i < n; i++)
			if (in[s * n + i] != s * 1000003 + rank * 7919 + i) {
				fprintf(stderr, "mpi_check: rank %d: alltoall from %d [%d]: %d\n", rank, s, i,
					in[s * n + i]);
				bad = 1;
				break;
			}
	if (rank == 0)
		printf("mpi_check: alltoall %d ints a rank: %s\n", n, bad ? "WRONG" : "ok");
	free(out);
	free(in);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0, any = 0;
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1u << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 1;
	}
	bad |= pingpong(rank, 1 - rank, max, rounds);
	bad |= allreduce(rank, size, 10000);
	bad |= alltoall(rank, size, 5000);
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %s\n", any ? "FAILED" : "all checked ok");
	MPI_Finalize();
	return any ? 1 : 0;
}
