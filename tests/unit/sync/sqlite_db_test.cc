// The SQLite layer: WAL mode, statements, errors as Status.
#include "sync/sqlite_db.h"

#include <gtest/gtest.h>

#include "testutil/test_util.h"

namespace ferry::sync {
namespace {

TEST(SqliteDbTest, RoundTripsRowsInWalMode) {
  test::ScratchDir dir;
  auto db = Db::Open(dir.Join("t.sqlite"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE(
      (*db)->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, v BLOB, n INT)").ok());
  auto ins = (*db)->Prepare("INSERT INTO t VALUES(?1, ?2, ?3)");
  ASSERT_TRUE(ins.ok());
  std::string blob("a\0b", 3);
  ASSERT_TRUE(ins->Bind(1, "key")
                  .BindBlob(2, blob)
                  .Bind(3, int64_t{1} << 40)
                  .Run()
                  .ok());
  auto sel = (*db)->Prepare("SELECT v, n FROM t WHERE k = ?1");
  ASSERT_TRUE(sel.ok());
  sel->Bind(1, "key");
  auto row = sel->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(sel->Blob(0), blob);
  EXPECT_EQ(sel->Int(1), int64_t{1} << 40);
  EXPECT_FALSE(*sel->Step());
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok() && *mode->Step());
  EXPECT_EQ(mode->Blob(0), "wal");
  // A constraint broken is an error naming the database, not a crash.
  Status dup = ins->Bind(1, "key").BindBlob(2, "").Bind(3, 0).Run();
  EXPECT_FALSE(dup.ok());
  EXPECT_NE(dup.ToString().find("t.sqlite"), std::string::npos);
}

TEST(SqliteDbTest, NotADatabaseIsAnError) {
  test::ScratchDir dir;
  test::WriteFile(Env::Default(), dir.Join("junk"), std::string(4096, 'x'));
  auto db = Db::Open(dir.Join("junk"));
  Status s = db.ok() ? (*db)->Exec("SELECT * FROM sqlite_master") : db.status();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace ferry::sync
