/* bfo_tcp_main.c - bfo-tcp: `bfo run` and `bfo stream` on their own, until
 * tools/bfo.c dispatches to them (bfo_cmd_run, bfo_cmd_stream in
 * tools/bfo_tcp_cmds.c).
 *   bfo-tcp run -n N [...] -- PROGRAM ARGS     bfo-tcp stream [...]
 */
#include <stdio.h>
#include <string.h>

int bfo_cmd_run(int argc, char **argv);
int bfo_cmd_stream(int argc, char **argv);

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return bfo_cmd_run(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "stream"))
        return bfo_cmd_stream(argc - 1, argv + 1);
    fprintf(stderr, "usage: bfo-tcp run -n N [options] -- PROGRAM ARGS...\n"
                    "       bfo-tcp stream [options]\n");
    return 2;
}
