"""The checklist: every path, method, header, status and error code of docs/PROTOCOL.md, each
pointing at the test that checks it. `test_checklist_points_at_real_tests` keeps the references
true. Entries marked (xfail: helper) are expected failures today, fixed by that helper (issue 15);
(xfail: reported) is a disagreement no helper owns yet.

| # | PROTOCOL.md | test |
|---|---|---|
| **Running the daemon** | | |
| D1 | flags `--root --socket --durability --event-loops --allow-group --log-level --heartbeat`, `--flag=value` form, settings then `blobd: listening on PATH` | `test_daemon.CommandLineTests.test_settings_then_listening_line` |
| D2 | `--help` | `test_daemon.CommandLineTests.test_help_prints_usage_and_exits_0` |
| D3 | usage error: exit 64, one-line hint (event loops 1–64, heartbeat 0.05–3600, durability, log level) | `test_daemon.CommandLineTests.test_usage_errors_exit_64_with_a_one_line_hint` |
| D4 | `--event-loops` 1 and 64, `--durability durable/relaxed` serve (durability itself is not observable from outside) | `test_daemon.CommandLineTests.test_event_loop_bounds_and_durability_modes_serve` |
| D5 | `--log-level debug` one line per request; `error` | `test_daemon.CommandLineTests.test_log_levels` |
| D6 | default root `$XDG_DATA_HOME/blobstore` else `~/.local/share/blobstore`, created 0700; default socket `$XDG_RUNTIME_DIR/blobstore/blobd.sock` (only when absolute) | `test_daemon.CommandLineTests.test_default_root_and_socket_come_from_xdg_variables`, `test_daemon.CommandLineTests.test_a_relative_xdg_runtime_dir_is_ignored` |
| D7 | default socket else `/tmp/blobstore-$UID/blobd.sock` (client side only: the daemon's fallback would touch a shared /tmp path) | `test_daemon.CommandLineTests.test_client_default_socket_without_xdg_runtime_dir` |
| D8 | socket path at most 107 bytes (108 → exit 64, nothing created) (xfail: protocol-b) | `test_daemon.CommandLineTests.test_a_socket_path_of_107_bytes_is_fine`, `test_daemon.CommandLineTests.test_a_socket_path_over_107_bytes_exits_64_creating_nothing` |
| D9 | one daemon per root: `ROOT/.blobd.lock` holds `pid N`, then `socket PATH`; second exits 1 naming the holder; lock released when the daemon dies | `test_daemon.StartupRuleTests.test_one_daemon_per_root`, `test_daemon.StartupRuleTests.test_the_lock_of_a_killed_daemon_is_released` |
| D10 | socket folder created 0700; refused if group/other-writable or not the daemon's user's (exit 1) | `test_daemon.StartupRuleTests.test_socket_folder_rules` |
| D11 | live socket → exit 1 `another daemon is already listening on PATH`; stale socket replaced; non-socket never removed | `test_daemon.StartupRuleTests.test_existing_socket_files` |
| D12 | socket mode 0600; 0660 and group GID with `--allow-group` | `test_daemon.StartupRuleTests.test_socket_folder_rules`, `test_daemon.PeerCheckTests.test_socket_mode_and_group_with_allow_group` |
| D13 | systemd activation: `LISTEN_PID`/`LISTEN_FDS`, fd 3 served, socket file kept | `test_daemon.SocketActivationTests.test_the_socket_passed_as_fd_3_is_served_and_kept` |
| D14 | peers: own uid, uid 0, effective gid of `--allow-group` served; others logged, `403 forbidden`, closed | `test_daemon.RootPeerTests.test_uid_0_is_served_by_a_daemon_of_another_user`, `test_daemon.PeerCheckTests.test_the_allowed_group_is_served`, `test_daemon.PeerCheckTests.test_other_peers_get_403_forbidden_and_a_close` |
| D15 | SIGTERM/SIGINT: stop accepting, close idle, in-progress responses carry `Connection: close`, at most 5 s, socket removed if still ours, exit 0 | `test_daemon.ShutdownTests.test_sigterm_and_sigint_stop_cleanly_and_remove_the_socket`, `test_daemon.ShutdownTests.test_a_request_in_progress_finishes_with_connection_close`, `test_daemon.ShutdownTests.test_a_stuck_request_is_closed_after_5_seconds`, `test_daemon.ShutdownTests.test_a_replaced_socket_file_is_not_removed` |
| **HTTP basics** | | |
| H1 | HTTP/1.1 and HTTP/1.0; other well-formed versions `505`, malformed ones `400` | `test_http.HTTPBasicsTests.test_http11_and_http10_are_served`, `test_http.HTTPBasicsTests.test_other_versions_get_505_bad_request_and_close`, `test_http.HTTPBasicsTests.test_a_malformed_version_is_400` |
| H2 | `Host` accepted, not required; the host name is ignored | `test_http.HTTPBasicsTests.test_host_is_not_required`, `test_http.HostIgnoredTests.test_the_host_name_is_ignored` |
| H3 | keep-alive default for 1.1; `Connection: close`; HTTP/1.0 needs `Connection: keep-alive` | `test_http.HTTPBasicsTests.test_keep_alive_is_the_default_for_http11`, `test_http.HTTPBasicsTests.test_connection_close_closes_after_the_response`, `test_http.HTTPBasicsTests.test_http10_closes_unless_keep_alive` |
| H4 | pipelining, responses in order | `test_http.HTTPBasicsTests.test_pipelined_requests_are_answered_in_order` |
| H5 | bodies by `Content-Length` or `Transfer-Encoding: chunked`, streamed, limit = store's (1 TiB) | `test_http.HTTPBasicsTests.test_content_length_and_chunked_bodies`, `test_http.HTTPBasicsTests.test_bodies_are_streamed_without_a_limit_below_the_stores`, `test_http.HTTPBasicsTests.test_expect_continue_above_the_store_maximum_is_413_too_large` |
| H6 | `Expect: 100-continue`: `100 Continue` then body; refused → error at once, close (store name, identifier, metadata, `413 too_large`) | `test_http.HTTPBasicsTests.test_expect_continue_acceptable_gets_100_then_the_final_response`, `test_http.HTTPBasicsTests.test_expect_continue_refused_gets_the_error_at_once_and_a_close`, `test_http.HTTPBasicsTests.test_expect_continue_above_the_store_maximum_is_413_too_large` |
| H7 | a refused PUT never creates the store (415/422/412/malformed chunked/client gone mid-body); the store does not exist while its first PUT is in progress (xfail: protocol-a) | `test_http.HTTPBasicsTests.test_refused_puts_never_create_the_store`, `test_http.HTTPBasicsTests.test_a_store_does_not_exist_while_its_first_put_is_in_progress` |
| H8 | a refused large upload without Expect still reads its answer (lingering close) (413 case xfail: protocol-a) | `test_http.HTTPBasicsTests.test_a_large_refused_upload_without_expect_reads_the_415`, `test_http.HTTPBasicsTests.test_a_declared_length_above_the_maximum_without_expect_reads_the_413` |
| H9 | head 32 KiB, start line 8 KiB (`414`), 100 fields (`431`) | `test_http.HTTPBasicsTests.test_request_head_limits` |
| H10 | malformed → codec status (`400 413 414 431 501 505`) + `bad_request`, closed; bad percent-encoding `400` | `test_http.HTTPBasicsTests.test_malformed_requests_get_the_codecs_status_and_a_close`, `test_http.HTTPBasicsTests.test_bad_percent_encoding_is_400_bad_request` |
| H11 | `Content-Length` on every response except 1xx/204/304; HEAD never has a body | `test_http.HTTPBasicsTests.test_every_response_has_content_length_except_1xx_204_304`, `test_http.HTTPBasicsTests.test_head_responses_have_no_body` |
| H12 | body on a route that takes none → close; error before the body: closed with Expect, read and discarded without | `test_http.HTTPBasicsTests.test_body_on_a_route_that_takes_none_closes_after_answering`, `test_http.HTTPBasicsTests.test_error_before_the_body_with_expect_closes`, `test_http.HTTPBasicsTests.test_error_before_a_body_without_expect_reads_and_discards_it` |
| H13 | every response has `Date` (issue 15) (xfail: protocol-b) | `test_http.HTTPBasicsTests.test_every_response_has_a_date` |
| **Paths and names** | | |
| P1 | the eight paths | `test_blobs.PathTests.test_every_path_answers` |
| P2 | percent-decoded first, then matched | `test_blobs.PathTests.test_the_path_is_percent_decoded_before_matching` |
| P3 | store names `[a-z0-9][a-z0-9._-]{0,62}` else `400 invalid_store_name` | `test_blobs.PathTests.test_store_name_rule` |
| P4 | `{id}` is the rest of the path; reserved bytes encoded | `test_blobs.PathTests.test_the_identifier_is_the_rest_of_the_path` |
| P5 | invalid identifiers → `400 invalid_identifier`; non-UTF-8 | `test_blobs.PathTests.test_invalid_identifiers_are_400`, `test_blobs.PathTests.test_non_utf8_identifiers_are_invalid_identifier` |
| P6 | `.`/`..`/empty segments → `400 invalid_identifier` (issue 15) (xfail: protocol-b); an empty `{id}` (`…/blobs/`) is not the collection (xfail: reported) | `test_blobs.PathTests.test_dot_and_empty_segments_are_invalid_identifier`, `test_blobs.PathTests.test_an_empty_identifier_is_invalid_not_the_collection`, `test_blobs.PathTests.test_the_client_refuses_an_empty_identifier` |
| P7 | store created by its first PUT; never-written store → `404` | `test_blobs.PathTests.test_a_store_is_created_by_its_first_put` |
| P8 | unknown path `404 not_found`; wrong method `405` + `Allow` per path | `test_blobs.PathTests.test_unknown_paths_are_404`, `test_blobs.PathTests.test_wrong_methods_are_405_with_allow` |
| P9 | HEAD wherever GET works (issue 15) (xfail: protocol-b) | `test_blobs.PathTests.test_head_works_wherever_get_works`, `test_blobs.PathTests.test_allow_lists_head_with_get` |
| **Metadata object** | | |
| M1 | fields, `etag` 16 hex (quoted in `ETag`), RFC 3339 ms, keys sorted, `image` only for images | `test_blobs.MetadataObjectTests.test_metadata_object_fields`, `test_blobs.MetadataObjectTests.test_etag_is_xxh64_of_the_content` |
| M2 | `created` kept across overwrites, reset by delete; `modified` per version | `test_blobs.MetadataObjectTests.test_created_is_kept_across_overwrites_and_reset_by_delete` |
| **PUT** | | |
| U1 | `Content-Type` recorded; default image type or `application/octet-stream` | `test_blobs.PutTests.test_content_type_is_recorded_or_guessed` |
| U2 | `Blob-Meta-*` lowercased, 1–64 `a-z0-9-_`, 64 pairs, 1024 B/value, 8 KiB → `400 invalid_metadata`; content type out of bounds | `test_blobs.PutTests.test_user_metadata_keys_are_lowercased_and_bounded`, `test_blobs.PutTests.test_content_type_out_of_bounds_is_invalid_metadata` |
| U3 | keys differing only in case → `400 invalid_metadata` (issue 15) (xfail: protocol-b) | `test_blobs.PutTests.test_meta_keys_differing_only_in_case_are_invalid_metadata` |
| U4 | `Blob-Validate: image/record/none`, `415 not_an_image`, `422 invalid_record`, bad value `400`, nothing stored | `test_blobs.PutTests.test_blob_validate`, `test_blobs.PutTests.test_record_validation_refuses_plain_garbage` |
| U5 | strict JSON for records (issue 15) (xfail: protocol-b) | `test_blobs.PutTests.test_record_validation_is_strict_json` |
| U6 | real images (PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC incl. grids, AVIF and variants) accepted with Pillow's format and size; truncated → 415 (per-file xfails: images) | `test_images.ImageValidationTests`, `test_images.ImageFilesSelfTest.test_manual_files_decode` |
| U7 | `If-None-Match: *` → `412` if exists, other value `400`; `If-Match` → `412`, `*` → `400`; `412` carries the current `ETag` | `test_blobs.PutTests.test_if_none_match_star_creates_only`, `test_blobs.PutTests.test_if_match_replaces_only_that_version` |
| U8 | `201 Created` / `200 OK`, JSON body, `ETag Last-Modified Blob-Created Blob-Meta-* Blob-Image-*` | `test_blobs.PutTests.test_201_for_new_200_for_replacement_with_headers` |
| **GET and HEAD** | | |
| G1 | `Content-Type Content-Length ETag Last-Modified Blob-Created Blob-Meta-* Blob-Image-* Accept-Ranges` | `test_blobs.GetTests.test_get_and_head_headers` |
| G2 | `If-None-Match` tag/list/weak/`*` → `304` with `ETag`, no body (other headers: being settled) | `test_blobs.GetTests.test_if_none_match` |
| G3 | `Range` → `206` + `Content-Range`, clamping, `416` + `bytes */size`, ignored forms → `200` | `test_blobs.GetTests.test_ranges` |
| G4 | missing blob or store `404`; HEAD same status and headers, no body | `test_blobs.GetTests.test_missing_blob_or_store_is_404_for_get_and_head` |
| G5 | not provided: `If-Modified-Since`, `If-Unmodified-Since`, `If-Match` on GET (ignored) | `test_blobs.GetTests.test_not_yet_provided_conditions_are_ignored` |
| **DELETE** | | |
| X1 | `204`; `404`; `If-Match` mismatch `412` (+ `ETag`); on a missing blob `412`; `If-None-Match: *` (xfail: protocol-b) | `test_blobs.DeleteTests.test_delete_blob`, `test_blobs.DeleteTests.test_delete_with_if_match_on_a_missing_blob_is_412`, `test_blobs.DeleteTests.test_delete_with_if_none_match_star` |
| X2 | `DELETE …/blobs` → `204`, also for a never-written store (nothing created); the store stays, empty | `test_blobs.DeleteTests.test_delete_all` |
| **Listing** | | |
| L1 | `prefix`, `type`, `{"items","nextCursor"}` | `test_listing.ListingTests.test_list_by_identifier_with_prefix_and_type` |
| L2 | `+` is not a space (xfail: protocol-b) | `test_listing.ListingTests.test_plus_in_a_query_is_a_plus` |
| L3 | `sort=identifier` (UTF-8 byte order) / `modified` (oldest first, ties by identifier) | `test_listing.ListingTests.test_sort_by_modified`, `test_listing.ListingTests.test_identifier_order_is_utf8_byte_order` |
| L4 | `limit` 1–10000, `cursor`/`nextCursor` (null on the last page), cursor tied to its sort | `test_listing.ListingTests.test_pages_and_cursors`, `test_listing.ListingTests.test_limit_bounds_and_bad_queries_are_invalid_query`, `test_listing.ListingTests.test_a_cursor_is_tied_to_its_sort_order` |
| L5 | unknown parameters ignored; never-written store `404` | `test_listing.ListingTests.test_unknown_parameters_are_ignored_and_unwritten_stores_are_404` |
| L6 | `GET /v1/stores` sorted with count and bytes; a store held by another process listed (xfail: protocol-a) | `test_listing.ListingTests.test_stores_lists_every_store_sorted`, `test_listing.LockedStoreTests.test_stores_lists_a_store_held_by_another_process` |
| L7 | verify: healthy, corrupt (identifier left out when unknown), orphaned; `404`; `POST` repairs into `quarantine/` (`quarantined`) | `test_listing.VerifyTests.test_verify_reports_healthy_corrupt_and_orphaned`, `test_listing.VerifyTests.test_verify_of_a_missing_store_is_404` |
| L8 | `GET /v1/health` | `test_listing.ListingTests.test_health` |
| **Change events** | | |
| E1 | `200`, `text/event-stream`, `no-cache`, `Connection: close`, no `Content-Length` | `test_events.EventTests.test_stream_response_head` |
| E2 | frames `put`/`removed`/`removed-all`, one-line JSON `data`, commit order, `?store=` | `test_events.EventTests.test_put_removed_and_removed_all_frames_in_commit_order`, `test_events.EventTests.test_each_frame_is_id_event_data_and_a_blank_line`, `test_events.EventTests.test_all_stores_without_a_filter_and_one_store_with_it` |
| E3 | ids +1; the first id of a run is its start time in µs | `test_events.EventTests.test_ids_start_at_the_daemons_start_time_in_microseconds` |
| E4 | `: heartbeat` on idle streams every `--heartbeat` s | `test_events.EventTests.test_heartbeats_on_idle_streams` |
| E5 | `Last-Event-ID` resume; `gap` frame (`lastEventId`, `firstAvailableId`, `id: M-1`); 10,000 retained | `test_events.EventTests.test_resume_with_last_event_id`, `test_events.EventTests.test_an_id_from_an_earlier_run_gets_a_gap_frame_first`, `test_events.BacklogTests.test_only_the_last_10000_events_are_retained`, `test_events.BacklogTests.test_a_backlog_of_10000_events_is_replayed`, `test_events.EventTests.test_client_watch_reconnects_with_its_last_id` |
| E6 | a replay of more than 4 MiB gets a head and every event (xfail: protocol-a) | `test_events.BigEventBacklogTests.test_a_replay_of_more_than_4_mib_gets_a_head_and_every_event` |
| E7 | slow readers (issue 15: protocol-a's rule, a reader is dropped once an event it is owed leaves the 10,000-event log; today's 4,096-event / 4 MiB rule does the opposite in both cases) (xfail: protocol-a) | `test_events.BacklogTests.test_a_reader_10000_events_behind_is_disconnected`, `test_events.BigEventBacklogTests.test_a_slow_reader_fewer_than_10000_events_behind_gets_every_event` |
| E8 | shutdown closes event streams at once | `test_daemon.ShutdownTests.test_sigterm_and_sigint_stop_cleanly_and_remove_the_socket` |
| E9 | errors: bad `store` `400 invalid_store_name`; bad `Last-Event-ID` / a body → `400 bad_request` | `test_events.EventTests.test_event_errors` |
| **Metrics** | | |
| R1 | content type, the eleven metrics and their types, buckets 100 µs … 10 s, `operation` values | `test_listing.MetricsTests.test_metrics_text_format_names_and_types` |
| R2 | counters per operation, errors ≥ 400, bytes received/sent, connections, subscribers, refused | `test_listing.MetricsTests.test_counters_count_each_operation`, `test_listing.MetricsTests.test_connection_gauges`, `test_daemon.PeerCheckTests.test_other_peers_get_403_forbidden_and_a_close` |
| **Errors** (each code's status and JSON body; `assertError` checks `Content-Type` and shape) | | |
| C1 | `bad_request` | `test_http.HTTPBasicsTests.test_malformed_requests_get_the_codecs_status_and_a_close` |
| C2 | `invalid_identifier`, `invalid_store_name`, `invalid_metadata`, `invalid_query` | `test_blobs.PathTests.test_invalid_identifiers_are_400`, `test_blobs.PathTests.test_store_name_rule`, `test_blobs.PutTests.test_user_metadata_keys_are_lowercased_and_bounded`, `test_listing.ListingTests.test_limit_bounds_and_bad_queries_are_invalid_query` |
| C3 | `403 forbidden`, `404 not_found`, `405 method_not_allowed` | `test_daemon.PeerCheckTests.test_other_peers_get_403_forbidden_and_a_close`, `test_blobs.PathTests.test_unknown_paths_are_404`, `test_blobs.PathTests.test_wrong_methods_are_405_with_allow` |
| C4 | `412`, `413 too_large`, `415`, `416`, `422`, `431` | `test_blobs.PutTests.test_if_match_replaces_only_that_version`, `test_http.HTTPBasicsTests.test_expect_continue_above_the_store_maximum_is_413_too_large`, `test_blobs.PutTests.test_blob_validate`, `test_blobs.GetTests.test_ranges`, `test_http.HTTPBasicsTests.test_request_head_limits` |
| C5 | `500 io_error`, `500 corrupt`, `500 unsupported_format` (`internal_error`: nothing triggers it from outside) | `test_listing.VerifyTests.test_an_unreadable_blob_is_500_io_error`, `test_listing.VerifyTests.test_a_damaged_blob_header_is_500_corrupt`, `test_daemon.StartupRuleTests.test_a_root_of_a_newer_layout_is_500_unsupported_format` |
| C6 | `501` / `505 bad_request` | `test_http.HTTPBasicsTests.test_malformed_requests_get_the_codecs_status_and_a_close` |
| C7 | `503 store_locked` | `test_listing.LockedStoreTests.test_a_store_held_by_another_process_is_503_store_locked` |
| C8 | `507 insufficient_storage` (a 2 MiB tmpfs; skipped where mount is not allowed) | `test_listing.FullDiskTests.test_a_full_disk_is_507_insufficient_storage` |
| C9 | the client's exception classes follow the codes | `test_blobs.ErrorTests.test_error_classes_follow_codes` |
| **Store policy and expiry** (cache mode) | | |
| S1 | `GET`/`HEAD`/`PUT /v1/stores/{store}`: `201` creates, `200` changes; members present replace, absent kept, `null` lifts; empty body changes nothing; the policy in `/v1/stores`; `blobstore_store_max_*` and `*_total` families; `Allow: GET, HEAD, PUT` | `test_policy.StorePolicyTests.test_a_store_is_created_with_a_policy_and_changed_member_by_member` |
| S2 | `400 invalid_policy` naming the member; `413 too_large` over 64 KiB; a refused policy creates nothing | `test_policy.StorePolicyTests.test_a_refused_policy_names_the_member_and_creates_nothing` |
| S3 | `Blob-Expires` (`never`, RFC 3339) and `Cache-Control: max-age` on PUT; bad values or both → `400 bad_request` | `test_policy.StorePolicyTests.test_a_puts_expiry_headers_are_checked` |
| S4 | `expired` and `evicted` events, typed by the client as removals | `test_policy.StorePolicyTests.test_removals_by_policy_are_typed_events` |
| S5 | `expires` in the metadata object, `Blob-Expires`/`Expires` headers, an expired blob not served, listed or kept (`expired` event) (needs the policy engine) | `test_cache_mode.CacheModeTests` |
| **Raw HTTP example** | | |
| Z1 | `PUT …/a%20b` → `201`, headers and body as shown | `test_blobs.ErrorTests.test_raw_http_example` |
| Z2 | the Python client's README examples | `test_readme.ReadmeTests.test_the_readme_examples_run` |
| **Client only** (no spec sentence: the client's own API) | | |
| K1 | `stream()` chunks, `put()` from a path and from a stream of unknown length (chunked) | `test_blobs.GetTests.test_stream_reads_in_chunks`, `test_blobs.PutTests.test_client_put_from_file_path_and_unknown_length_stream` |
| K2 | large puts use `Expect: 100-continue`; keep-alive retried after a daemon restart | `test_blobs.ClientConnectionTests` |
| K3 | the client's SSE parser (line endings, comments, multi-line data, ids) and typed events | `test_events.SSEParserTests` |
"""

from __future__ import annotations

import importlib
import re
import unittest



class ChecklistTests(unittest.TestCase):

    def test_checklist_points_at_real_tests(self) -> None:
        references = re.findall(r"`(test_\w+\.\w+(?:\.\w+)?)`", __doc__ or "")
        self.assertGreater(len(references), 100)
        for reference in references:
            with self.subTest(reference=reference):
                module_name, class_name, *method = reference.split(".")
                module = importlib.import_module(module_name)
                cls = getattr(module, class_name)
                if method:
                    self.assertTrue(callable(getattr(cls, method[0], None)),
                                    f"{reference} does not exist")

    def test_every_test_is_in_the_checklist(self) -> None:
        listed = set(re.findall(r"`(test_\w+\.\w+(?:\.\w+)?)`", __doc__ or ""))
        missing = []
        for module_name in ("test_http", "test_blobs", "test_listing", "test_events",
                            "test_daemon", "test_policy", "test_cache_mode"):
            module = importlib.import_module(module_name)
            for case in unittest.defaultTestLoader.loadTestsFromModule(module):
                for test in case:  # type: ignore[attr-defined]
                    name = f"{module_name}.{type(test).__name__}.{test._testMethodName}"
                    if name not in listed and f"{module_name}.{type(test).__name__}" not in listed:
                        missing.append(name)
        self.assertEqual(missing, [], "tests not in the checklist")


if __name__ == "__main__":
    unittest.main()
