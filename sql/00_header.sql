-- kernelindex install script, assembled by the Makefile from sql/NN_*.sql.
\echo Use "CREATE EXTENSION kernelindex" to load this file. \quit
