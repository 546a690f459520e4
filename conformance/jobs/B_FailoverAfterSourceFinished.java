// b-failover-after-source-finished: job (a), but sum[1] throws once (attempt 0) at its 400th
// input record, after `short` has finished; region failover restarts the single region and the
// finished `short` is deployed finished-on-restore.
public class B_FailoverAfterSourceFinished {
    public static void main(String[] args) throws Exception {
        A_TwoSources2pc.run(args, "b-failover-after-source-finished", 1, 400);
    }
}
