"""`make bench`: every benchmark, each figure beside a bare baseline run in the same process."""

import asyncio

from benchmarks import (
    bench_core,
    bench_discord,
    bench_grading,
    bench_insights,
    bench_interchange,
    bench_lesson,
    bench_reader,
    bench_scale,
    bench_slack,
)


async def main() -> None:
    for module in (bench_core, bench_insights, bench_slack, bench_scale, bench_discord, bench_grading, bench_lesson,
                   bench_reader, bench_interchange):
        for line in await module.main():
            print(line, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
