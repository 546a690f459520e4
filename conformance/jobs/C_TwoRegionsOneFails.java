// c-two-regions-one-fails: two independent pipelines, srcA (300 records, 1/ms) -> sinkA (2PC)
// and srcB (300 records, 1/ms) -> mapB -> sinkB (2PC), all p=1 over forward edges with chaining
// disabled (the paced source is still one task). mapB throws once at its 150th record on attempt
// 0: only region B restarts. Aligned exactly-once checkpoints every 30 ms.

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Path;
import java.util.Map;

public class C_TwoRegionsOneFails {
    public static void main(String[] args) throws Exception {
        Path dir = Common.runDir(args);
        long n = 300, intervalUs = 1000, cpMs = 30, failAt = 150;
        Configuration conf = Common.streamingConf();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.enableCheckpointing(cpMs, CheckpointingMode.EXACTLY_ONCE);
        String commits = dir.resolve("commits.jsonl").toString();
        DataStream<Tuple2<Long, Long>> a = Common.pacedSource(env, "srcA", n, 1, intervalUs);
        a.sinkTo(new Common.TwoPhaseCommitSink("sinkA", commits))
                .name("sinkA").uid("sinkA").setParallelism(1)
                // Its own slot sharing group keeps sinkA out of srcA's chain while writer, stamp
                // and committer stay one task (disableChaining() would split the sink in three).
                .slotSharingGroup("sinkA");
        DataStream<Tuple2<Long, Long>> b = Common.pacedSource(env, "srcB", n, 1, intervalUs);
        b.map(new Common.SlowOrFailingMap(0, 0, failAt)).returns(Common.KV)
                .name("mapB").uid("mapB").setParallelism(1).disableChaining()
                .sinkTo(new Common.TwoPhaseCommitSink("sinkB", commits))
                .name("sinkB").uid("sinkB").setParallelism(1).slotSharingGroup("sinkB");
        Map<String, Object> params = Common.map(
                "sources", Common.map("srcA", Common.map("records", n, "parallelism", 1, "record_interval_us", intervalUs),
                        "srcB", Common.map("records", n, "parallelism", 1, "record_interval_us", intervalUs)),
                "mapB", Common.map("parallelism", 1),
                "sinkA", Common.map("parallelism", 1, "delivery", "two_phase_commit"),
                "sinkB", Common.map("parallelism", 1, "delivery", "two_phase_commit"),
                "edges", "forward, chaining disabled (sinks in their own slot sharing groups)",
                "key", "seq % 16", "value", "seq % 100 + 1",
                "checkpointing", Common.map("interval_ms", cpMs, "mode", "EXACTLY_ONCE", "unaligned", false),
                "restart", Common.map("type", "fixed-delay", "attempts", 3, "delay_ms", 100, "failover", "region"),
                "cluster", Common.map("task_managers", 1, "slots", 8),
                "fault", Common.map("fail_task", "mapB[0]", "attempt", 0, "at_record", failAt));
        Common.runOnMiniCluster(env, conf, "c-two-regions-one-fails", dir, params);
    }
}
