//! The SQL the store's tables are read and written with, one text for every
//! backend: statements use `?N` placeholders and the subset of SQL both
//! SQLite and PostgreSQL accept (`ON CONFLICT`, `RETURNING`, `CAST`), and
//! values cross as [`Value`]s, integers always 64-bit, text through
//! [`stored_text`] (which makes every text storable in both backends'
//! `TEXT` and reads it back as it was). A [`Tx`] is one open
//! transaction of the backend in use; record modules ask it for rows and
//! never see the backend's own types.

use std::{borrow::Cow, cell::RefCell};

use postgres::{
    fallible_iterator::FallibleIterator,
    types::{IsNull, ToSql, Type, to_sql_checked},
};
use rusqlite::{
    Transaction,
    types::{ToSqlOutput, ValueRef},
};

use super::{StoreError, postgres::Session, stored_text};

/// A value bound to a placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Text(&'a str),
    Null,
}

impl From<i64> for Value<'_> {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<u32> for Value<'_> {
    fn from(value: u32) -> Self {
        Self::Int(i64::from(value))
    }
}

impl From<bool> for Value<'_> {
    fn from(value: bool) -> Self {
        Self::Int(i64::from(value))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(value: &'a str) -> Self {
        Self::Text(value)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(value: &'a String) -> Self {
        Self::Text(value)
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null, Into::into)
    }
}

impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(value: &'a Option<String>) -> Self {
        value.as_deref().into()
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Self::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(value)),
            Self::Text(text) => match stored_text::encode(text) {
                Cow::Borrowed(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
                Cow::Owned(text) => ToSqlOutput::Owned(rusqlite::types::Value::Text(text)),
            },
            Self::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        })
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Self::Int(value) if i64::accepts(ty) => value.to_sql(ty, out),
            Self::Text(text) if <&str>::accepts(ty) => {
                stored_text::encode(text).as_ref().to_sql(ty, out)
            }
            Self::Null => Ok(IsNull::Yes),
            _ => Err(format!("a value of the wrong type for a {ty} column").into()),
        }
    }

    fn accepts(ty: &Type) -> bool {
        i64::accepts(ty) || <&str>::accepts(ty)
    }

    to_sql_checked!();
}

/// The values for a statement's placeholders, in order: `values![a, b]`.
macro_rules! values {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::sql::Value::from($value)),*]
    };
}
pub(crate) use values;

/// One open transaction of the store's backend.
pub struct Tx<'c> {
    inner: Inner<'c>,
}

enum Inner<'c> {
    Sqlite(Transaction<'c>),
    Postgres(RefCell<Session<'c>>),
}

impl<'c> Tx<'c> {
    pub(super) fn sqlite(transaction: Transaction<'c>) -> Self {
        Self { inner: Inner::Sqlite(transaction) }
    }

    pub(super) fn postgres(session: Session<'c>) -> Self {
        Self { inner: Inner::Postgres(RefCell::new(session)) }
    }

    pub(super) fn commit(self) -> Result<(), StoreError> {
        match self.inner {
            Inner::Sqlite(transaction) => Ok(transaction.commit()?),
            Inner::Postgres(session) => Ok(session.into_inner().transaction.commit()?),
        }
    }

    /// The time (ms since the epoch) by the clock all writers of this
    /// state share: this machine's for a SQLite file, the database
    /// server's for PostgreSQL (machines' clocks may disagree).
    pub fn shared_clock_ms(&self) -> Result<i64, StoreError> {
        match &self.inner {
            Inner::Sqlite(_) => Ok(super::now_ms()),
            Inner::Postgres(_) => self.one(
                "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
                values![],
                |row| row.get(0),
            ),
        }
    }

    /// Runs `work` so that its failure undoes only what it did, and the
    /// rest of the transaction goes on: `Ok(Err(_))` is `work`'s own
    /// failure, undone. When even undoing it fails (the connection is
    /// gone), that is the outer error and the transaction is lost.
    pub fn apart<T>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, StoreError>,
    ) -> Result<Result<T, StoreError>, StoreError> {
        self.simple("SAVEPOINT apart")?;
        let done = work(self);
        if done.is_err() {
            self.simple("ROLLBACK TO SAVEPOINT apart")?;
        }
        self.simple("RELEASE SAVEPOINT apart")?;
        Ok(done)
    }

    /// Runs `sql`, without parameters, as it is (not prepared).
    fn simple(&self, sql: &str) -> Result<(), StoreError> {
        match &self.inner {
            Inner::Sqlite(tx) => Ok(tx.execute_batch(sql)?),
            Inner::Postgres(session) => Ok(session.borrow_mut().transaction.batch_execute(sql)?),
        }
    }

    /// Runs a statement; returns how many rows it changed.
    pub fn execute(&self, sql: &str, values: &[Value<'_>]) -> Result<usize, StoreError> {
        match &self.inner {
            Inner::Sqlite(tx) => {
                Ok(tx.prepare_cached(sql)?.execute(rusqlite::params_from_iter(values))?)
            }
            Inner::Postgres(session) => {
                let session = &mut *session.borrow_mut();
                let statement = session.prepared(sql)?;
                let changed = session.transaction.execute(&statement, &pg_values(values))?;
                Ok(usize::try_from(changed).unwrap_or(usize::MAX))
            }
        }
    }

    /// Reads the query's rows in order with `read`, until it returns
    /// `false` or the rows end.
    pub fn each(
        &self,
        sql: &str,
        values: &[Value<'_>],
        mut read: impl FnMut(&Fields<'_>) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        match &self.inner {
            Inner::Sqlite(tx) => {
                let mut statement = tx.prepare_cached(sql)?;
                let mut rows = statement.query(rusqlite::params_from_iter(values))?;
                while let Some(row) = rows.next()? {
                    if !read(&Fields::Sqlite(row))? {
                        break;
                    }
                }
            }
            Inner::Postgres(session) => {
                let session = &mut *session.borrow_mut();
                let statement = session.prepared(sql)?;
                let mut rows = session.transaction.query_raw(&statement, pg_values(values))?;
                while let Some(row) = rows.next()? {
                    if !read(&Fields::Postgres(&row))? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Every row the query returns, each read by `read`.
    pub fn rows<T>(
        &self,
        sql: &str,
        values: &[Value<'_>],
        mut read: impl FnMut(&Fields<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.each(sql, values, |row| {
            out.push(read(row)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// The first row the query returns, if any, read by `read`.
    pub fn row<T>(
        &self,
        sql: &str,
        values: &[Value<'_>],
        read: impl FnOnce(&Fields<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut read = Some(read);
        let mut out = None;
        self.each(sql, values, |row| {
            if let Some(read) = read.take() {
                out = Some(read(row)?);
            }
            Ok(false)
        })?;
        Ok(out)
    }

    /// The one row a query that always returns one (a `COUNT`) returns.
    pub fn one<T>(
        &self,
        sql: &str,
        values: &[Value<'_>],
        read: impl FnOnce(&Fields<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.row(sql, values, read)?
            .ok_or(StoreError::Inconsistent("a query that always answers returned no row"))
    }
}

fn pg_values<'v>(values: &'v [Value<'_>]) -> Vec<&'v (dyn ToSql + Sync)> {
    values.iter().map(|value| value as &(dyn ToSql + Sync)).collect()
}

/// The columns of one row.
pub enum Fields<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

impl Fields<'_> {
    /// Column `index`, as `T`.
    pub fn get<T: Column>(&self, index: usize) -> Result<T, StoreError> {
        T::read(self, index)
    }

    /// Column `index`, a name parsed by `parse`: a name this version does
    /// not know is an error, never a guess.
    pub fn named<T>(
        &self,
        index: usize,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<T, StoreError> {
        let name: String = self.get(index)?;
        parse(&name).ok_or(StoreError::UnknownName(name))
    }

    /// [`Fields::named`] for a column that may be NULL.
    pub fn optional_named<T>(
        &self,
        index: usize,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, StoreError> {
        let name: Option<String> = self.get(index)?;
        name.map(|name| parse(&name).ok_or(StoreError::UnknownName(name))).transpose()
    }
}

/// A Rust type a column is read as.
pub trait Column: Sized {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError>;
}

/// Column `index` as the backend's client reads it.
fn by_backend<T>(fields: &Fields<'_>, index: usize) -> Result<T, StoreError>
where
    T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>,
{
    match fields {
        Fields::Sqlite(row) => Ok(row.get(index)?),
        Fields::Postgres(row) => Ok(row.try_get(index)?),
    }
}

impl Column for i64 {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        by_backend(fields, index)
    }
}

impl Column for Option<i64> {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        by_backend(fields, index)
    }
}

impl Column for String {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        Ok(stored_text::decode(by_backend(fields, index)?))
    }
}

impl Column for Option<String> {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        Ok(by_backend::<Option<String>>(fields, index)?.map(stored_text::decode))
    }
}

impl Column for u32 {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        u32::try_from(i64::read(fields, index)?)
            .map_err(|_| StoreError::Inconsistent("a stored count or process id is out of range"))
    }
}

impl Column for bool {
    fn read(fields: &Fields<'_>, index: usize) -> Result<Self, StoreError> {
        Ok(i64::read(fields, index)? != 0)
    }
}
